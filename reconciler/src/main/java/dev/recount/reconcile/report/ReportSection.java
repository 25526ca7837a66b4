package dev.recount.reconcile.report;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A section a run adds to its report beyond the window metrics (attribution): an HTML fragment placed before the
 * footer of report.html, and a field of summary.json.
 */
public interface ReportSection {
    /** One or more {@code <section>} elements; every value from the data escaped. */
    String html();

    /** Adds this section's field(s) to the root of summary.json. */
    void addTo(ObjectNode summary);
}
