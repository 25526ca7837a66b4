package dev.recount.tools.demo;

/**
 * The documented exit code of reconcile and of correct for "succeeded, but beyond tolerance" (docs/contract.md).
 */
final class ReconcileExit {
    static final int BEYOND_TOLERANCE = 3;

    private ReconcileExit() {}
}
