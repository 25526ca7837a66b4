package dev.recount.core.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** The build's version (Maven writes it into a resource of core), for every command's {@code --version}. */
public final class RecountVersion implements IVersionProvider {
    static final String RESOURCE = "/dev/recount/core/cli/version.properties";

    /** The version Maven built, e.g. {@code 0.1.0-SNAPSHOT}. */
    public static String version() {
        Properties p = new Properties();
        try (InputStream in = RecountVersion.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException("resource " + RESOURCE + " is missing from the build");
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
        String v = p.getProperty("version", "");
        if (v.isBlank() || v.contains("${"))
            throw new IllegalStateException(RESOURCE + " was not filtered by the build");
        return v;
    }

    @Override
    public String[] getVersion() {
        return new String[] {"recount " + version()};
    }

    /** {@code ./recount --version}. */
    public static void main(String[] args) {
        System.out.println("recount " + version());
    }
}
