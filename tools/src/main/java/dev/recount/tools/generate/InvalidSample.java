package dev.recount.tools.generate;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.event.InvalidReason;
import dev.recount.core.sets.Attribute;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/**
 * One example of each kind of bad record producers really send, with the reason the contract gives it. Those that
 * carry an event carry the generated attributes too ({@code attributes}: valid under every declared rule), so a
 * required attribute cannot turn one into another reason's dead letter.
 */
enum InvalidSample {
    NOT_JSON(InvalidReason.MALFORMED, false) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return "impression," + campaign + "," + at;
        }
    },
    TRUNCATED_JSON(InvalidReason.MALFORMED, false) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return "{\"event_id\":\"x\",\"event_type\":\"click\",\"event_ts\":" + at + ",\"campa";
        }
    },
    JSON_ARRAY(InvalidReason.MALFORMED, false) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return "[\"" + campaign + "\"," + at + "]";
        }
    },
    NOT_UTF8(InvalidReason.MALFORMED, false) {
        @Override
        byte[] value(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            byte[] b = valid(campaign, at, "bad-utf8", attributes).getBytes(StandardCharsets.UTF_8);
            b[b.length / 2] = (byte) 0xC3; // a lone lead byte
            b[b.length / 2 + 1] = (byte) 0x28;
            return b;
        }
    },
    NULL_VALUE(InvalidReason.MALFORMED, true) {
        @Override
        byte[] value(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return null;
        }
    },
    MISSING_FIELD(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "missing", attributes).replace(",\"channel_id\":\"web\"", "");
        }
    },
    EMPTY_ID(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "", attributes).replace("\"event_id\":\"ev-bad-\"", "\"event_id\":\"\"");
        }
    },
    NUMBER_AS_STRING(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "str", attributes).replace("\"cost_micros\":1500", "\"cost_micros\":\"1500\"");
        }
    },
    UNKNOWN_TYPE(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "type", attributes).replace("\"impression\"", "\"view\"");
        }
    },
    NEGATIVE_COST(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "neg", attributes).replace("\"cost_micros\":1500", "\"cost_micros\":-1500");
        }
    },
    BEYOND_LONG(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "huge", attributes)
                    .replace("\"cost_micros\":1500", "\"cost_micros\":92233720368547758070");
        }
    },
    /** A NUL written as a JSON escape: PostgreSQL would refuse the id (CONTRACT §1: no control characters). */
    NUL_IN_ID(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "nul", attributes)
                    .replace("\"campaign_id\":\"" + campaign + "\"", "\"campaign_id\":\"" + campaign + "\\u0000x\"");
        }
    },
    /** A C1 control (NEL, U+0085) written raw, as a Latin-1 confused producer does: legal JSON, an illegal id. */
    C1_CONTROL_IN_ID(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "c1", attributes)
                    .replace("\"channel_id\":\"web\"", "\"channel_id\":\"web\u0085\"");
        }
    },
    /** Half a surrogate pair (a UTF-16 string cut between its halves): the sinks would store it as '?'. */
    LONE_SURROGATE_ID(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "surrogate", attributes)
                    .replace("\"channel_id\":\"web\"", "\"channel_id\":\"web\\ud83d\"");
        }
    },
    /** One micro-unit above validation.max-cost-micros. */
    COST_ABOVE_MAX(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            BigInteger above =
                    BigInteger.valueOf(p.validation().maxCostMicros()).add(BigInteger.ONE);
            return valid(campaign, at, "cost", attributes).replace("\"cost_micros\":1500", "\"cost_micros\":" + above);
        }
    },
    FAR_FUTURE(InvalidReason.TIMESTAMP, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return validAt(campaign, at + p.validation().maxFuture().toMillis() + 3_600_000L, "future", attributes);
        }
    },
    FAR_PAST(InvalidReason.TIMESTAMP, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return validAt(campaign, at - p.validation().maxPast().toMillis() - 86_400_000L, "past", attributes);
        }
    },
    /** A country its declared list does not hold (ZZ: a code ISO 3166 leaves to private use). */
    COUNTRY_OUTSIDE_LIST(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            return valid(campaign, at, "country", attributes.deepCopy().put(GeneratedAttributes.COUNTRY, "ZZ"));
        }

        @Override
        boolean breaks(GeneratedAttributes declared) {
            Attribute country = declared.declared(GeneratedAttributes.COUNTRY);
            return country != null
                    && !country.values().isEmpty()
                    && !country.values().contains("ZZ");
        }
    },
    /** A slot id with a control character (BEL), as a JSON escape: a declared string attribute is held to the id rule. */
    CONTROL_IN_SLOT_ID(InvalidReason.SCHEMA, true) {
        @Override
        String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
            String slot = attributes.path(GeneratedAttributes.SLOT).asText("home-top") + "\u0007";
            return valid(campaign, at, "slot", attributes.deepCopy().put(GeneratedAttributes.SLOT, slot));
        }

        @Override
        boolean breaks(GeneratedAttributes declared) {
            return declared.declared(GeneratedAttributes.SLOT) != null;
        }
    };

    final InvalidReason reason;
    /** Whether the record carries a campaign key (a producer that cannot parse its own payload sends none). */
    final boolean keyed;

    InvalidSample(InvalidReason reason, boolean keyed) {
        this.reason = reason;
        this.keyed = keyed;
    }

    String text(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
        throw new UnsupportedOperationException(name());
    }

    byte[] value(String campaign, long at, TrafficProfile p, ObjectNode attributes) {
        return text(campaign, at, p, attributes).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Whether this sample is invalid under the declared attributes: always, except for the samples of an attribute's
     * rule, which only a declared attribute has.
     */
    boolean breaks(GeneratedAttributes declared) {
        return true;
    }

    static String valid(String campaign, long at, String tag, ObjectNode attributes) {
        return validAt(campaign, at, tag, attributes);
    }

    static String validAt(String campaign, long eventTs, String tag, ObjectNode attributes) {
        return "{\"event_id\":\"ev-bad-" + tag + "\",\"event_type\":\"impression\",\"event_ts\":" + eventTs
                + ",\"campaign_id\":\"" + campaign + "\",\"channel_id\":\"web\",\"cost_micros\":1500"
                + GeneratedAttributes.members(attributes) + "}";
    }
}
