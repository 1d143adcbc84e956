package dev.meshbridge.core.aggregate;

import dev.meshbridge.core.model.MeshSnapshot;

/**
 * Receives every published snapshot, in order, on the aggregator's thread: keep the work short and never block on
 * I/O. The first call after subscribing carries the current snapshot; a listener that has not seen {@code
 * sequence - 1} must treat the snapshot as complete rather than apply {@link MeshSnapshot#changed()}.
 */
@FunctionalInterface
public interface SnapshotListener {

    void onSnapshot(MeshSnapshot snapshot);
}
