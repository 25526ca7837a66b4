package dev.recount.stack.embedded;

/** What runs where, for {@code status} and the end of {@code up}. */
public record StackStatus(
        StackLayout layout,
        ServiceState kafka,
        ServiceState postgres,
        String bootstrapServers,
        String jdbcUrl,
        String adminUser) {
    public boolean allUp() {
        return kafka.up() && postgres.up();
    }

    public boolean noneRunning() {
        return !kafka.running() && !postgres.running();
    }
}
