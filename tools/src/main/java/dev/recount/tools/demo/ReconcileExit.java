package dev.recount.tools.demo;

/** The reconciler's documented exit code for "succeeded, but beyond tolerance" (see reconciler/README.md). */
final class ReconcileExit {
    static final int BEYOND_TOLERANCE = 3;

    private ReconcileExit() {}
}
