import CMalloc
import FoundationEssentials

/// glibc's allocator, set for a process that runs for months and works in bursts: a pass, then
/// hours of sleep. Two of glibc's defaults keep what a burst freed for the rest of the process's
/// life (`scripts/soak.sh`: an idle daemon's anonymous memory went from 4 to 33 MiB in 1,800
/// passes, still growing, with 16 arenas holding 2.3 MiB each and almost none of it in use; with
/// these settings 7.9 MiB after 1,600 passes, 1.8 MiB of it in use, and flat after the first third):
/// - The mmap threshold adapts: freeing a block that was allocated with mmap (a 2 MiB list, the
///   cache file encoded from it) raises the threshold to that size and the trim threshold to
///   twice that, so every arena keeps that much free memory at its top instead of returning it.
///   A fixed threshold (glibc's initial 128 KiB) keeps large blocks in mmap and trimming prompt.
/// - Up to 8 arenas per core, each made when threads contend and never freed. The daemon starts a
///   thread for every blocking step, so a pass of many stores makes many of them. One per core
///   is enough for the threads that allocate at the same time (verification runs one per core).
public enum HeapSettings {
    /// Call first thing in `main`: glibc fixes the arena limit when another thread first allocates.
    public static func apply() {
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        _ = mallopt(M_ARENA_MAX, Int32(clamping: max(2, ProcessInfo.processInfo.activeProcessorCount)))
    }

    /// Gives the kernel back the free pages inside malloc's heaps, which glibc never does by
    /// itself (it returns only free memory at a heap's top, and a single live block above a hole
    /// keeps it). For the end of a burst of work followed by a long sleep: a pass, not a request.
    public static func releaseFreeMemory() {
        _ = malloc_trim(0)
    }
}
