package dev.recount.faults;

/** The faults the suite injects; each round of the suite is one fault against a fresh pipeline. */
enum Fault {
    KILL_STREAM_ONCE("kill -9 of the whole stream JVM once, right after a checkpoint, while traffic flows"),
    KILL_STREAM("kill -9 of the whole stream JVM, 5 times per round: during traffic, during a checkpoint, right "
            + "after one, while catching up after a restart"),
    RESTART_AFTER_TRANSACTION_TIMEOUT("kill -9 of the stream JVM right after a checkpoint, restarted only after the "
            + "Kafka transaction timeout (shortened to 5 s) has passed, twice per round"),
    BROKER_RESTART("the Kafka broker stopped for 15 s and started again, once while produce runs (produce is rerun "
            + "and continues) and once while only the job runs"),
    POSTGRES_STOPPED("PostgreSQL stopped (fast shutdown) for 30 s while the job runs"),
    POSTGRES_FROZEN("PostgreSQL frozen (SIGSTOP of every PostgreSQL process) for 60 s while the job runs"),
    CHECKPOINT_DELETED("after a kill -9, the newest checkpoint (its results committed) deleted before the restart"),
    CHECKPOINT_CORRUPTED(
            "after a kill -9 right after a checkpoint completed, its _metadata truncated before the restart"),
    POISON_CORPUS("hostile records of every kind mixed into the traffic (NUL, C1, lone surrogates, costs of 5e18, "
            + "over the maximum and beyond 64 bits, 257-byte ids, non-objects, duplicate keys, 600 KB, a 700 KB key "
            + "with 64 KB of control bytes, a producer clock 50 minutes ahead, a record stamped near 2^63): no "
            + "restart, dead letters exact by reason, the watermark never ahead of the clock"),
    RECONCILE_KILLED("reconcile killed with kill -9 in the middle of its run, then run again"),
    CLUSTER_PROCESSES_KILLED(
            "on the local standalone clusters (`up --cluster`, `stream --cluster`, `backfill --cluster`): "
                    + "kill -9 of one Flink TaskManager while traffic flows (the job fails over to the other), then of both "
                    + "at once (started again 15 s later), then of the JobManager (`stream --cluster` run again), and of "
                    + "a Spark executor while it runs a task of `backfill range`"),
    SET_ADDED("a metric set added to a running deployment: the stream stopped with a savepoint after half the traffic, "
            + "a third set declared and migrated, the stream started again (the set counts from its next window), "
            + "then `backfill range --set` and `reconcile --set` of the set over the history, and the usual backfill and "
            + "reconcile of every set");

    final String description;

    Fault(String description) {
        this.description = description;
    }
}
