package dev.recount.stack.cluster;

/** The log4j2 configuration of the cluster processes: INFO to the file named by {@code -Dlog.file}, rolled at 20 MB. */
final class Log4jConfig {
    private Log4jConfig() {}

    static String toFile() {
        return String.join(
                "\n",
                "# Written by `recount up --cluster`: the framework processes log to their own file (-Dlog.file).",
                "monitorInterval = 0",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = File",
                "appender.file.name = File",
                "appender.file.type = RollingFile",
                "appender.file.fileName = ${sys:log.file}",
                "appender.file.filePattern = ${sys:log.file}.%i",
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n",
                "appender.file.policies.type = Policies",
                "appender.file.policies.size.type = SizeBasedTriggeringPolicy",
                "appender.file.policies.size.size = 20MB",
                "appender.file.strategy.type = DefaultRolloverStrategy",
                "appender.file.strategy.max = 3",
                // Chatty and harmless at INFO.
                "logger.kafka.name = org.apache.kafka",
                "logger.kafka.level = WARN",
                "logger.hadoop.name = org.apache.hadoop",
                "logger.hadoop.level = WARN",
                "logger.parquet.name = org.apache.parquet",
                "logger.parquet.level = WARN",
                "");
    }

    /** {@code flink run}'s client: warnings only, to the console; the job's own lines are printed by its main. */
    static String cli() {
        return String.join(
                "\n",
                "# Written by `recount up --cluster`: the log of `recount stream --cluster` (Flink's client).",
                "rootLogger.level = WARN",
                "rootLogger.appenderRef.console.ref = Console",
                "appender.console.name = Console",
                "appender.console.type = Console",
                "appender.console.target = SYSTEM_ERR",
                "appender.console.layout.type = PatternLayout",
                "appender.console.layout.pattern = %d{HH:mm:ss} %-5p %c{1} - %m%n",
                "logger.recount.name = dev.recount",
                "logger.recount.level = INFO",
                // A distribution-less client has no YARN CLI and no plugins directory; neither is needed here.
                "logger.cli.name = org.apache.flink.client.cli.CliFrontend",
                "logger.cli.level = ERROR",
                "logger.plugins.name = org.apache.flink.core.plugin",
                "logger.plugins.level = ERROR",
                "logger.hadoop.name = org.apache.hadoop.util.NativeCodeLoader",
                "logger.hadoop.level = ERROR",
                "");
    }
}
