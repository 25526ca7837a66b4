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
 * Lets GET and HEAD through to Flink's router; answers anything else 403 and closes the connection — but only once
 * the refused request has been read to its end: closing with the client's body still unread makes the kernel reset
 * the connection, and the client may then lose the 403 and see only a broken connection.
 */
@ChannelHandler.Sharable
final class ReadOnlyRestHandler extends ChannelInboundHandlerAdapter {
    static final String REFUSAL = "{\"errors\":[\"the Web UI of recount stream is read-only: it cannot submit, cancel,"
            + " stop or rescale jobs (stop the job with Ctrl-C or SIGTERM)\"]}";

    private final Map<String, String> responseHeaders;

    ReadOnlyRestHandler(Map<String, String> responseHeaders) {
        this.responseHeaders = Map.copyOf(responseHeaders);
    }

    /** Set on a connection whose request was refused: the rest of that request is read and dropped. */
    private static final AttributeKey<Boolean> REFUSED = AttributeKey.valueOf("recount-rest-refused");

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && !isRead(request.method())) {
            boolean complete = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.FORBIDDEN,
                    Unpooled.copiedBuffer(REFUSAL, StandardCharsets.UTF_8));
            responseHeaders.forEach((name, value) -> response.headers().set(name, value));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=UTF-8");
            response.headers().set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            if (complete) {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.channel().attr(REFUSED).set(true);
                ctx.writeAndFlush(response);
            }
            return;
        }
        if (msg instanceof HttpContent && Boolean.TRUE.equals(ctx.channel().attr(REFUSED).get())) {
            boolean last = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            if (last) ctx.close();
            return;
        }
        ctx.fireChannelRead(msg);
    }

    private static boolean isRead(HttpMethod method) {
        return HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method);
    }
}
