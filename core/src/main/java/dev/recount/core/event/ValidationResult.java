package dev.recount.core.event;

import java.util.Objects;

/** The outcome of validating one Kafka record: a valid {@link AdEvent}, or the reason it is invalid. */
public final class ValidationResult {
    private final AdEvent event;
    private final InvalidReason reason;
    private final String detail;

    private ValidationResult(AdEvent event, InvalidReason reason, String detail) {
        this.event = event;
        this.reason = reason;
        this.detail = detail;
    }

    public static ValidationResult valid(AdEvent event) {
        return new ValidationResult(Objects.requireNonNull(event, "event"), null, null);
    }

    public static ValidationResult invalid(InvalidReason reason, String detail) {
        return new ValidationResult(
                null, Objects.requireNonNull(reason, "reason"), Objects.requireNonNull(detail, "detail"));
    }

    public boolean isValid() {
        return event != null;
    }

    /** @throws IllegalStateException if invalid */
    public AdEvent event() {
        if (event == null) throw new IllegalStateException("record is invalid (" + reason.wireName() + "): " + detail);
        return event;
    }

    public InvalidReason reason() {
        return reason;
    }

    public String detail() {
        return detail;
    }

    @Override
    public String toString() {
        return isValid() ? "valid " + event : "invalid " + reason.wireName() + ": " + detail;
    }
}
