//! What an SM offers to resident blocks and what a block claims, as data (session 15): the
//! per-SM budget of the H200 ([`SM90_BUDGET`]), one block's claim ([`BlockUse`]) and how many
//! blocks of one kernel fit beside a block of another ([`blocks_beside`]); the checks "these
//! blocks fit one SM" ([`SmBudget::holds`]) and "a block may ask for this much shared memory"
//! ([`SmBudget::allows`]) that the plans' tables are tested against. Pure arithmetic: no device
//! query (the plans are built for the H200's numbers; `sms` comes from the device).

/// What one SM offers to resident blocks, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmBudget {
    /// Shared memory per SM at the largest carveout, bytes.
    pub smem: u64,
    /// Shared memory the driver reserves per resident block, bytes.
    pub smem_per_block: u64,
    /// 32-bit registers per SM.
    pub regs: u64,
    /// Resident threads per SM.
    pub threads: u64,
    /// Registers one thread can use at most (a block's bound without launch bounds).
    pub regs_per_thread: u64,
    /// Dynamic shared memory one block may ask for at most, bytes (the opt-in maximum).
    pub block_smem_max: u64,
}

impl SmBudget {
    /// Whether `blocks` blocks of `smem` bytes of dynamic shared memory each fit one SM together
    /// (each with the driver's reserve), by shared memory alone.
    pub const fn holds(&self, blocks: u64, smem: u32) -> bool {
        blocks * (smem as u64 + self.smem_per_block) <= self.smem
    }

    /// Whether one block may ask for `smem` bytes of dynamic shared memory.
    pub const fn allows(&self, smem: u32) -> bool {
        smem as u64 <= self.block_smem_max
    }
}

/// The H200's SM (sm_90): 228 KB of shared memory, 1 KB reserved per block, 64K registers,
/// 2048 threads, at most 255 registers per thread (allocated in units of 8: 256), at most 227 KB
/// of dynamic shared memory per block.
pub const SM90_BUDGET: SmBudget = SmBudget {
    smem: 233_472,
    smem_per_block: 1024,
    regs: 65_536,
    threads: 2048,
    regs_per_thread: 256,
    block_smem_max: 232_448,
};

/// One block's claim on an SM: dynamic shared memory, threads, and the `minBlocksPerMultiprocessor`
/// of its launch bounds (1 without), which bounds its registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockUse {
    /// Dynamic shared memory, bytes (the kernels here have no static shared memory).
    pub smem: u64,
    /// Threads.
    pub threads: u64,
    /// The launch bounds' blocks per SM (1: none).
    pub min_blocks: u64,
}

impl BlockUse {
    /// The most registers the block can hold: what its launch bounds leave per block, at most
    /// the per-thread maximum times its threads.
    pub fn regs(&self, sm: &SmBudget) -> u64 {
        (sm.regs / self.min_blocks.max(1)).min(sm.regs_per_thread * self.threads)
    }

    fn smem_claim(&self, sm: &SmBudget) -> u64 {
        self.smem + sm.smem_per_block
    }
}

/// How many `guest` blocks fit on one SM beside one `resident` block (0 when the resident block
/// alone does not fit), by shared memory, registers and threads, each at its worst case.
pub fn blocks_beside(sm: &SmBudget, resident: &BlockUse, guest: &BlockUse) -> u64 {
    let left = |total: u64, used: u64| total.checked_sub(used);
    let (Some(smem), Some(regs), Some(threads)) = (
        left(sm.smem, resident.smem_claim(sm)),
        left(sm.regs, resident.regs(sm)),
        left(sm.threads, resident.threads),
    ) else {
        return 0;
    };
    (smem / guest.smem_claim(sm).max(1))
        .min(regs / guest.regs(sm).max(1))
        .min(threads / guest.threads.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_memory_per_sm_and_per_block() {
        let sm = &SM90_BUDGET;
        // 228 KB per SM with 1 KB reserved per block: two blocks of 113 KB fit, not of 113 KB + 1.
        assert!(sm.holds(2, 113 * 1024) && !sm.holds(2, 113 * 1024 + 1));
        assert!(sm.holds(1, 227 * 1024) && !sm.holds(1, 227 * 1024 + 1));
        assert!(sm.holds(0, u32::MAX));
        // A block may ask for 227 KB.
        assert!(sm.allows(227 * 1024) && !sm.allows(227 * 1024 + 1));
    }
}
