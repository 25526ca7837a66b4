package dev.recount.stream.window;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;

/** The window key without window_start (the window assigner adds that): (campaign_id, channel_id). */
public final class CampaignChannelKey implements KeySelector<WindowPartial, Tuple2<String, String>> {
    private static final long serialVersionUID = 1L;
    public static final TypeInformation<Tuple2<String, String>> TYPE = Types.TUPLE(Types.STRING, Types.STRING);

    @Override
    public Tuple2<String, String> getKey(WindowPartial partial) {
        return Tuple2.of(partial.campaignId, partial.channelId);
    }
}
