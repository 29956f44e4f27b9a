//! The counting allocator behind the allocations-per-action figure: the `referee`
//! binary installs it as the global allocator, and the match loop's thread reads its
//! own count. Its own room because it is the one piece of `unsafe` in the bench.

/// A global allocator that counts the allocations of each thread, for the
/// allocations-per-action figure. The `referee` binary installs it; the cost is one
/// thread-local increment per allocation.
#[derive(Debug)]
pub struct CountingAlloc;

thread_local! {
    /// Allocations made by this thread (a `const` initialiser: no lazy set-up, no
    /// destructor, so the allocator itself never allocates or re-enters).
    static ALLOCATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

// SAFETY: every call is passed on unchanged to the system allocator; the counter is
// a plain thread-local cell that neither allocates nor panics (`try_with`).
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as above.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as above.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (and reallocations) this thread has made, when [`CountingAlloc`] is
/// the global allocator; `None` when it is not.
pub fn thread_allocations() -> Option<u64> {
    let count = || ALLOCATIONS.with(std::cell::Cell::get);
    let before = count();
    drop(std::hint::black_box(Box::new(0u64)));
    let after = count();
    (after > before).then_some(after)
}
