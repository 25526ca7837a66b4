package dev.recount.tools.generate;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.recount.core.sets.Attribute;
import dev.recount.core.sets.FieldType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The fields beyond the contract the generator sends on every event, for metric sets to use: {@code slot_id} (the ad
 * slot: a few per campaign), {@code country} (a short list, skewed; missing on about 1 % of events, so its default
 * applies) and {@code device} (following the channel); now and then also {@code sdk}, an object no set declares, which
 * the lake keeps. A declared attribute that lists its values is drawn from those values.
 *
 * <p>Drawn from a random source of their own, so the contract fields of a seed's traffic do not change with them.
 */
final class GeneratedAttributes {
    static final String SLOT = "slot_id";
    static final String COUNTRY = "country";
    static final String DEVICE = "device";
    /** Sent now and then and declared by no set: the lake keeps every field beyond the contract. */
    static final String UNDECLARED = "sdk";

    private static final List<String> SLOTS = List.of("home-top", "home-side", "article-inline", "video-pre");
    private static final Map<String, Double> COUNTRY_WEIGHTS =
            weights("US", 0.40, "DE", 0.15, "GB", 0.12, "FR", 0.10, "IN", 0.08, "BR", 0.06, "JP", 0.05, "other", 0.04);
    /** The weight of a declared country the generator has no weight for. */
    private static final double OTHER_COUNTRY_WEIGHT = 0.02;

    private static final Map<String, List<String>> DEVICES_BY_CHANNEL = Map.of(
            "web", List.of("desktop", "desktop", "mobile", "tablet"),
            "ios", List.of("mobile", "mobile", "mobile", "tablet"),
            "android", List.of("mobile", "mobile", "mobile", "tablet"),
            "ctv", List.of("ctv"),
            "email", List.of("desktop", "mobile"));
    static final double COUNTRY_MISSING_SHARE = 0.01;
    static final double UNDECLARED_SHARE = 0.03;

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final Map<String, Attribute> declared = new LinkedHashMap<>();
    private final List<String> slots;
    private final List<String> countries;
    private final double[] countryCumulative;
    private final SplittableRandom random;

    /**
     * @throws IllegalArgumentException when the declared attributes refuse what the generator sends ({@link #check})
     */
    GeneratedAttributes(List<Attribute> attributes, long seed) {
        check(attributes);
        for (Attribute a : attributes) declared.put(a.name(), a);
        this.slots = valuesOf(SLOT, SLOTS);
        this.countries = valuesOf(COUNTRY, List.copyOf(COUNTRY_WEIGHTS.keySet()));
        this.countryCumulative = new double[countries.size()];
        double total = 0;
        for (int i = 0; i < countries.size(); i++) {
            total += COUNTRY_WEIGHTS.getOrDefault(countries.get(i), OTHER_COUNTRY_WEIGHT);
            countryCumulative[i] = total;
        }
        for (int i = 0; i < countryCumulative.length; i++) countryCumulative[i] /= total;
        // Its own stream of numbers, derived from the seed: the contract fields stay those of the seed.
        this.random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 0x5EED);
    }

    /**
     * Refuses declared attributes that refuse what the generator sends: an attribute it does not send that is
     * required, or one of its three declared an integer.
     *
     * @throws IllegalArgumentException naming the attribute
     */
    static void check(List<Attribute> attributes) {
        for (Attribute a : attributes) {
            boolean ours = a.name().equals(SLOT)
                    || a.name().equals(COUNTRY)
                    || a.name().equals(DEVICE);
            if (!ours && a.required()) {
                throw new IllegalArgumentException("the metric-sets file requires attribute " + a.name()
                        + ", which the generator does not send (it sends " + SLOT + ", " + COUNTRY + " and " + DEVICE
                        + ")");
            }
            if (ours && a.type() != FieldType.STRING) {
                throw new IllegalArgumentException("the metric-sets file declares " + a.name()
                        + " an integer attribute; the generator sends it as a string");
            }
        }
    }

    /** The declared attribute of that name, or null. */
    Attribute declared(String name) {
        return declared.get(name);
    }

    /** The attributes of one event of campaign number {@code campaign} on {@code channel}. */
    ObjectNode draw(int campaign, String channel) {
        ObjectNode n = JSON.objectNode();
        // A few slots per campaign: two to four, the same ones for the whole run.
        int campaignSlots = Math.min(slots.size(), 2 + campaign % 3);
        n.put(SLOT, slots.get((campaign + random.nextInt(campaignSlots)) % slots.size()));
        Attribute country = declared(COUNTRY);
        if (random.nextDouble() >= COUNTRY_MISSING_SHARE || (country != null && country.required())) {
            n.put(COUNTRY, countries.get(pick(countryCumulative)));
        }
        n.put(DEVICE, device(channel));
        if (declared(UNDECLARED) == null && random.nextDouble() < UNDECLARED_SHARE) {
            n.putObject(UNDECLARED).put("name", "recount-js").put("version", "5.1." + random.nextInt(4));
        }
        return n;
    }

    /** Attributes every declared rule accepts, for the invalid samples that must fail for another reason only. */
    ObjectNode valid(int campaign, String channel) {
        ObjectNode n = draw(campaign, channel);
        if (!n.has(COUNTRY)) n.put(COUNTRY, countries.get(0));
        n.remove(UNDECLARED);
        return n;
    }

    private String device(String channel) {
        List<String> candidates = DEVICES_BY_CHANNEL.getOrDefault(channel, List.of("mobile"));
        Attribute a = declared(DEVICE);
        if (a != null && !a.values().isEmpty()) {
            List<String> allowed =
                    candidates.stream().filter(a.values()::contains).toList();
            candidates = allowed.isEmpty() ? a.values() : allowed;
        }
        return candidates.get(random.nextInt(candidates.size()));
    }

    /** The generator's own values of {@code name}, or the declared ones when the attribute lists them. */
    private List<String> valuesOf(String name, List<String> own) {
        Attribute a = declared.get(name);
        return a == null || a.values().isEmpty() ? own : a.values();
    }

    private int pick(double[] cumulative) {
        double u = random.nextDouble();
        for (int i = 0; i < cumulative.length; i++) if (u < cumulative[i]) return i;
        return cumulative.length - 1;
    }

    /** Members of {@code attributes} as JSON text to append inside an object: {@code ,"a":1,"b":"x"}, or nothing. */
    static String members(ObjectNode attributes) {
        String json = attributes.toString();
        return json.length() <= 2 ? "" : "," + json.substring(1, json.length() - 1);
    }

    private static Map<String, Double> weights(Object... pairs) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) out.put((String) pairs[i], (Double) pairs[i + 1]);
        return out;
    }
}
