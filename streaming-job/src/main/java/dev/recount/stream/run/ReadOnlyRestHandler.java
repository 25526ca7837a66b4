package dev.recount.stream.run;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.flink.shaded.netty4.io.netty.buffer.Unpooled;
import org.apache.flink.shaded.netty4.io.netty.channel.ChannelFutureListener;
import org.apache.flink.shaded.netty4.io.netty.channel.ChannelHandler;
import org.apache.flink.shaded.netty4.io.netty.channel.ChannelHandlerContext;
import org.apache.flink.shaded.netty4.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.DefaultFullHttpResponse;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.FullHttpResponse;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpContent;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpHeaderNames;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpHeaderValues;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpMethod;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpRequest;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpResponseStatus;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.HttpVersion;
import org.apache.flink.shaded.netty4.io.netty.handler.codec.http.LastHttpContent;
import org.apache.flink.shaded.netty4.io.netty.util.AttributeKey;
import org.apache.flink.shaded.netty4.io.netty.util.ReferenceCountUtil;

/**
 * Lets GET and HEAD through to Flink's router, and a checkpoint request ({@code POST /jobs/<id>/checkpoints}) that
 * carries the secret of this JVM ({@link #TOKEN_HEADER}; a checkpoint is harmless, and the secret keeps even that
 * to this process); answers anything else 403 and closes the connection — but only once
 * the refused request has been read to its end: closing with the client's body still unread makes the kernel reset
 * the connection, and the client may then lose the 403 and see only a broken connection.
 */
@ChannelHandler.Sharable
final class ReadOnlyRestHandler extends ChannelInboundHandlerAdapter {
    static final String REFUSAL = "{\"errors\":[\"the Web UI of recount stream is read-only: it cannot submit, cancel,"
            + " stop or rescale jobs (stop the job with Ctrl-C or SIGTERM)\"]}";

    /** The header a checkpoint request carries the secret in. */
    static final String TOKEN_HEADER = "X-Recount-Checkpoint-Token";

    private static final java.util.regex.Pattern CHECKPOINT_PATH =
            java.util.regex.Pattern.compile("/(v1/)?jobs/[0-9a-f]{32}/checkpoints(\\?.*)?");

    private final Map<String, String> responseHeaders;
    /** Null: no request but GET and HEAD. */
    private final byte[] checkpointToken;

    ReadOnlyRestHandler(Map<String, String> responseHeaders, String checkpointToken) {
        this.responseHeaders = Map.copyOf(responseHeaders);
        this.checkpointToken = checkpointToken == null ? null : checkpointToken.getBytes(StandardCharsets.UTF_8);
    }

    /** Set on a connection whose request was refused: the rest of that request is read and dropped. */
    private static final AttributeKey<Boolean> REFUSED = AttributeKey.valueOf("recount-rest-refused");

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && !isRead(request.method()) && !isOwnCheckpointRequest(request)) {
            boolean complete = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            FullHttpResponse response = new DefaultFullHttpResponse(
                    HttpVersion.HTTP_1_1,
                    HttpResponseStatus.FORBIDDEN,
                    Unpooled.copiedBuffer(REFUSAL, StandardCharsets.UTF_8));
            responseHeaders.forEach((name, value) -> response.headers().set(name, value));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=UTF-8");
            response.headers()
                    .set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            if (complete) {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.channel().attr(REFUSED).set(true);
                ctx.writeAndFlush(response);
            }
            return;
        }
        if (msg instanceof HttpContent
                && Boolean.TRUE.equals(ctx.channel().attr(REFUSED).get())) {
            boolean last = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            if (last) ctx.close();
            return;
        }
        ctx.fireChannelRead(msg);
    }

    private boolean isOwnCheckpointRequest(HttpRequest request) {
        if (checkpointToken == null || !HttpMethod.POST.equals(request.method())) return false;
        if (!CHECKPOINT_PATH.matcher(request.uri()).matches()) return false;
        String token = request.headers().get(TOKEN_HEADER);
        return token != null
                && java.security.MessageDigest.isEqual(checkpointToken, token.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean isRead(HttpMethod method) {
        return HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method);
    }
}
