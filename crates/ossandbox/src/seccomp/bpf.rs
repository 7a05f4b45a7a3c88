//! The deny list as one classic-BPF program.
//!
//! Layout (`EPERM`, `ALLOW`, ... are jumps to shared returns):
//!
//! ```text
//!     ld arch; jeq AUDIT_ARCH_NATIVE ? next : EPERM    foreign ABI (i386 int 0x80): refuse
//!     ld nr;   jge X32_SYSCALL_BIT ? EPERM : next      x86_64 only: x32 numbers
//!     tree:    jge split ? right : left                binary search over sorted segments
//!     leaf:    jeq nr ? act : ALLOW                    a lone number, or for a range only the
//!          or  jge first ? next : ALLOW                bounds the search has not yet checked
//!              jgt last ? ALLOW : act
//!     act:     ERRNO(e) (no code: the jump goes straight to the shared return)
//!          or  the block inline: per alternative, load and test each argument word; the
//!              last test passing → ERRNO(e), any failing → next alternative (ALLOW after
//!              the last)
//!     ret ERRNO(EPERM); ret ERRNO(ENOSYS); ret ALLOW   one RET per value, at the end
//! ```
//!
//! Segments are runs of consecutive numbers with the same action (e.g. `acct`..`ioperm`).
//!
//! Why a tree: attaching a filter makes the kernel (`seccomp_cache_prepare`) emulate it for
//! every syscall number of each architecture, to cache the numbers a filter always allows.
//! A linear chain costs every number a walk over every rule; a tree costs the depth. Numbers
//! outside the table reach ALLOW having loaded only `nr` and `arch`, so the kernel caches
//! them as allowed and they never run the filter at all.
//!
//! Why small: the rest of the attach cost (classic→eBPF conversion, JIT) grows with the
//! instruction count, RETs the most; hence shared returns, one JSET for single-bit flags of
//! one word (clone's namespace flags, S_ISUID|S_ISGID), and no reload of a word the
//! accumulator already holds.
//!
//! Blocks sit at their leaves and the program is short, so jumps stay short; jt/jf are 8
//! bits, and where a target is farther than 255 instructions the assembler routes it through
//! a `ja` (32-bit offset).

use std::collections::BTreeMap;

use super::{syscall_number, ArgCheck, SyscallRule, X86_64_ONLY};
use crate::Error;

#[cfg(target_endian = "big")]
compile_error!("seccomp argument offsets assume a little-endian target (low word first)");

/// One classic-BPF instruction, laid out like the kernel's `struct sock_filter`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// A classic-BPF program.
pub type Program = Vec<Instruction>;

// Opcodes (linux/bpf_common.h); only these are emitted, all of them understood by the
// kernel's cache emulation (`seccomp_is_const_allow`).
pub(super) const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
pub(super) const ALU_AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
pub(super) const JA: u16 = 0x05; // BPF_JMP | BPF_JA
pub(super) const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
pub(super) const JGT_K: u16 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
pub(super) const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
pub(super) const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
pub(super) const RET_K: u16 = 0x06; // BPF_RET | BPF_K

/// BPF_MAXINSNS: the kernel refuses longer programs.
pub const MAX_INSTRUCTIONS: usize = 4096;

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
pub(super) const NR_OFFSET: u32 = 0;
pub(super) const ARCH_OFFSET: u32 = 4;
const ARGS: u8 = 6;

/// Offset of the low 32 bits of `args[index]` (little-endian).
fn arg_low(index: u8) -> u32 {
    16 + 8 * index as u32
}

/// Offset of the high 32 bits of `args[index]` (little-endian).
fn arg_high(index: u8) -> u32 {
    arg_low(index) + 4
}

// AUDIT_ARCH_* = EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE (not in the libc crate).
#[cfg(target_arch = "x86_64")]
pub(super) const AUDIT_ARCH_NATIVE: u32 = 62 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "aarch64")]
pub(super) const AUDIT_ARCH_NATIVE: u32 = 183 | 0x8000_0000 | 0x4000_0000;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the seccomp filter supports x86_64 and aarch64 only");

/// x32 syscalls arrive with the x86_64 arch and this bit set in the number.
#[cfg(target_arch = "x86_64")]
pub(super) const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Native numbers are below this (exclusive); on x86_64 the x32 check has already refused
/// everything above.
#[cfg(target_arch = "x86_64")]
const NR_LIMIT: u64 = X32_SYSCALL_BIT as u64;
#[cfg(not(target_arch = "x86_64"))]
const NR_LIMIT: u64 = 1 << 32;

/// `SECCOMP_RET_ERRNO` with `errno` (validated to 1..=4095 before it gets here).
pub(super) fn ret_errno(errno: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA)
}

/// One alternative of a syscall's block: `errno` when every check holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Alternative {
    errno: i32,
    checks: Vec<ArgCheck>,
}

/// What the filter does for a syscall number in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// Return this ERRNO whatever the arguments.
    Ret(u32),
    /// Test the arguments: the first alternative that holds gives its errno; none → ALLOW.
    Block(Vec<Alternative>),
}

/// Consecutive syscall numbers `first..=last` with the same action.
struct Segment {
    first: u32,
    last: u32,
    action: Action,
}

/// Compiles `rules` to one program. For a syscall named by several rules, rules are tried
/// in slice order and alternatives in `when` order; the first that matches gives the errno.
/// Rules for the [`X86_64_ONLY`] calls are left out elsewhere; any other unknown name is an
/// error.
pub fn generate(rules: &[SyscallRule]) -> Result<Program, Error> {
    let segments = segments(blocks(rules)?);
    let mut asm = Asm::default();
    let eperm = ret_errno(libc::EPERM);

    // A foreign ABI must never reach the native deny list; refuse, never kill.
    asm.stmt(LD_W_ABS, ARCH_OFFSET);
    let native = asm.label();
    let foreign = asm.ret(eperm);
    asm.jump(JEQ_K, AUDIT_ARCH_NATIVE, native, foreign);
    asm.bind(native);
    asm.stmt(LD_W_ABS, NR_OFFSET);
    // x32 shares AUDIT_ARCH_X86_64, so the arch check lets its numbers through.
    #[cfg(target_arch = "x86_64")]
    {
        let ok = asm.label();
        let x32 = asm.ret(eperm);
        asm.jump(JGE_K, X32_SYSCALL_BIT, x32, ok);
        asm.bind(ok);
    }
    if segments.is_empty() {
        asm.stmt(RET_K, libc::SECCOMP_RET_ALLOW);
    } else {
        tree(&mut asm, &segments, 0, NR_LIMIT);
    }

    let program = asm.finish()?;
    if program.len() > MAX_INSTRUCTIONS {
        return Err(Error::Seccomp(format!(
            "the filter needs {} instructions, more than the kernel's {MAX_INSTRUCTIONS}",
            program.len()
        )));
    }
    Ok(program)
}

/// Each syscall number's alternatives, in rule order, cut after the first unconditional one
/// (nothing after it can be reached).
fn blocks(rules: &[SyscallRule]) -> Result<BTreeMap<u32, Vec<Alternative>>, Error> {
    let mut blocks: BTreeMap<u32, Vec<Alternative>> = BTreeMap::new();
    for rule in rules {
        let Some(nr) = syscall_number(rule.name) else {
            // Nothing to deny where the call does not exist; any other unknown name is a
            // mistake in the list, which must not leave a call open.
            if !cfg!(target_arch = "x86_64") && X86_64_ONLY.contains(&rule.name) {
                continue;
            }
            return Err(Error::Seccomp(format!(
                "{}: no such system call on this architecture",
                rule.name
            )));
        };
        let nr = u32::try_from(nr)
            .ok()
            .filter(|&n| (n as u64) < NR_LIMIT)
            .ok_or_else(|| Error::Seccomp(format!("{}: bad syscall number {nr}", rule.name)))?;
        // errno 0 would make the call "succeed" without running; above 4095 the kernel clamps.
        if !(1..=4095).contains(&rule.errno) {
            return Err(Error::Seccomp(format!(
                "{}: errno {} out of range",
                rule.name, rule.errno
            )));
        }
        for check in rule.when.iter().flatten() {
            let index = match *check {
                ArgCheck::Eq32 { index, .. }
                | ArgCheck::Ne32 { index, .. }
                | ArgCheck::HasBits { index, .. }
                | ArgCheck::HasBits32 { index, .. } => index,
            };
            if index >= ARGS {
                return Err(Error::Seccomp(format!(
                    "{}: argument index {index} out of range",
                    rule.name
                )));
            }
        }
        let block = blocks.entry(nr).or_default();
        let unconditional = [vec![]];
        let when = if rule.when.is_empty() {
            &unconditional[..]
        } else {
            &rule.when[..]
        };
        for checks in when {
            if block.last().is_some_and(|a| a.checks.is_empty()) {
                break;
            }
            // An empty mask always holds; dropping it keeps "unconditional" detectable.
            let checks = checks
                .iter()
                .filter(|c| {
                    !matches!(
                        c,
                        ArgCheck::HasBits { mask: 0, .. } | ArgCheck::HasBits32 { mask: 0, .. }
                    )
                })
                .copied()
                .collect();
            block.push(Alternative {
                errno: rule.errno,
                checks,
            });
        }
    }
    Ok(blocks)
}

/// Merges consecutive numbers with the same action (e.g. `acct`..`ioperm`).
fn segments(blocks: BTreeMap<u32, Vec<Alternative>>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (nr, block) in blocks {
        let action = match &block[..] {
            [only] if only.checks.is_empty() => Action::Ret(ret_errno(only.errno)),
            _ => Action::Block(block),
        };
        match out.last_mut() {
            Some(s) if s.last + 1 == nr && s.action == action => s.last = nr,
            _ => out.push(Segment {
                first: nr,
                last: nr,
                action,
            }),
        }
    }
    out
}

/// The return a segment needs no code for: an unconditional action, where the search has
/// already narrowed `lo <= nr < hi` to the segment.
fn direct(segment: &Segment, lo: u64, hi: u64) -> Option<u32> {
    match segment.action {
        Action::Ret(k) if lo >= segment.first as u64 && hi <= segment.last as u64 + 1 => Some(k),
        _ => None,
    }
}

/// Binary search over `segments` (non-empty), knowing `lo <= nr < hi` on this path. Numbers
/// between segments reach ALLOW; a side that is just a return jumps straight to it.
fn tree(asm: &mut Asm, segments: &[Segment], lo: u64, hi: u64) {
    let [segment] = segments else {
        let (left, right) = segments.split_at(segments.len() / 2);
        let split = right[0].first as u64;
        let side = |asm: &mut Asm, half: &[Segment], lo, hi| {
            match half {
                [s] => direct(s, lo, hi).map(|k| (asm.ret(k), false)),
                _ => None,
            }
            .unwrap_or_else(|| (asm.label(), true))
        };
        let (l, l_code) = side(asm, left, lo, split);
        let (r, r_code) = side(asm, right, split, hi);
        asm.jump(JGE_K, split as u32, r, l);
        if l_code {
            asm.bind(l);
            tree(asm, left, lo, split);
        }
        if r_code {
            asm.bind(r);
            tree(asm, right, split, hi);
        }
        return;
    };
    // A leaf: check whatever bounds the search has not, then act.
    let allow = libc::SECCOMP_RET_ALLOW;
    let (first, last) = (segment.first, segment.last);
    let need_lo = lo < first as u64;
    let need_hi = hi > last as u64 + 1;
    let hit = match segment.action {
        Action::Ret(k) if need_lo || need_hi => asm.ret(k),
        Action::Ret(k) => return asm.stmt(RET_K, k), // only a lone segment at the root
        Action::Block(_) => asm.label(),
    };
    if first == last && need_lo && need_hi {
        let miss = asm.ret(allow);
        asm.jump(JEQ_K, first, hit, miss);
    } else {
        if need_lo {
            let (ok, miss) = (if need_hi { asm.label() } else { hit }, asm.ret(allow));
            asm.jump(JGE_K, first, ok, miss);
            if need_hi {
                asm.bind(ok);
            }
        }
        if need_hi {
            let miss = asm.ret(allow);
            asm.jump(JGT_K, last, miss, hit);
        }
    }
    if let Action::Block(alts) = &segment.action {
        asm.bind(hit);
        block(asm, alts);
    }
}

/// The alternatives of one syscall: a failed test goes to the next alternative (the last
/// one's to ALLOW); the last test of an alternative, passing, goes to its ERRNO.
fn block(asm: &mut Asm, alts: &[Alternative]) {
    // Lower to word tests. Consecutive alternatives that are each one single-bit test of the
    // same word with the same errno become one JSET (clone's namespace flags, S_ISUID|S_ISGID).
    let mut lowered: Vec<(i32, Vec<Test>)> = Vec::new();
    for alt in alts {
        let tests: Vec<Test> = alt.checks.iter().flat_map(tests).collect();
        if let ([Test::AnyBits { offset, mask }], Some((errno, prev))) =
            (&tests[..], lowered.last_mut())
        {
            if let [Test::AnyBits { offset: o, mask: m }] = &mut prev[..] {
                if *o == *offset && *errno == alt.errno {
                    *m |= mask;
                    continue;
                }
            }
        }
        lowered.push((alt.errno, tests));
    }

    // The word the accumulator holds (None: nr, or a masked word), to skip reloading it.
    let mut held: Option<u32> = None;
    for (n, (errno, tests)) in lowered.iter().enumerate() {
        if tests.is_empty() {
            asm.stmt(RET_K, ret_errno(*errno));
            return;
        }
        let last_alt = n + 1 == lowered.len();
        let fail = if last_alt {
            asm.ret(libc::SECCOMP_RET_ALLOW)
        } else {
            asm.label()
        };
        for (j, test) in tests.iter().enumerate() {
            let last_test = j + 1 == tests.len();
            let pass = if last_test {
                asm.ret(ret_errno(*errno))
            } else {
                asm.label()
            };
            held = test.emit(asm, held, pass, fail);
            if !last_test {
                asm.bind(pass); // reached only from this test: `held` still holds
            }
        }
        if !last_alt {
            asm.bind(fail);
            // Reached from each test of the alternative: known only if they all leave the
            // same unmasked word.
            let first = tests[0].leaves();
            held = first.filter(|_| tests.iter().all(|t| t.leaves() == first));
        }
    }
}

/// One test of a 32-bit word of the arguments.
#[derive(Debug, Clone, Copy)]
enum Test {
    /// The word at `offset` equals `value` (or differs, when `negate`).
    Eq {
        offset: u32,
        value: u32,
        negate: bool,
    },
    /// Any bit of `mask` is set (JSET); a single bit is an "all bits" test too.
    AnyBits { offset: u32, mask: u32 },
    /// All bits of `mask` (two or more) are set: AND, then compare.
    AllBits { offset: u32, mask: u32 },
}

fn tests(check: &ArgCheck) -> Vec<Test> {
    let bits = |offset, mask: u32| match mask.count_ones() {
        0 => None, // always holds
        1 => Some(Test::AnyBits { offset, mask }),
        _ => Some(Test::AllBits { offset, mask }),
    };
    match *check {
        ArgCheck::Eq32 { index, value } => vec![Test::Eq {
            offset: arg_low(index),
            value,
            negate: false,
        }],
        ArgCheck::Ne32 { index, value } => vec![Test::Eq {
            offset: arg_low(index),
            value,
            negate: true,
        }],
        ArgCheck::HasBits32 { index, mask } => bits(arg_low(index), mask).into_iter().collect(),
        ArgCheck::HasBits { index, mask } => [
            bits(arg_low(index), mask as u32),
            bits(arg_high(index), (mask >> 32) as u32),
        ]
        .into_iter()
        .flatten()
        .collect(),
    }
}

impl Test {
    fn offset(&self) -> u32 {
        match *self {
            Test::Eq { offset, .. }
            | Test::AnyBits { offset, .. }
            | Test::AllBits { offset, .. } => offset,
        }
    }

    /// The word the accumulator holds after this test (None once masked).
    fn leaves(&self) -> Option<u32> {
        match self {
            Test::AllBits { .. } => None,
            _ => Some(self.offset()),
        }
    }

    /// Emits the test, loading its word unless `held` already is it; returns what A holds.
    fn emit(&self, asm: &mut Asm, held: Option<u32>, pass: Label, fail: Label) -> Option<u32> {
        if held != Some(self.offset()) {
            asm.stmt(LD_W_ABS, self.offset());
        }
        match *self {
            Test::Eq { value, negate, .. } => {
                let (t, f) = if negate { (fail, pass) } else { (pass, fail) };
                asm.jump(JEQ_K, value, t, f);
            }
            Test::AnyBits { mask, .. } => asm.jump(JSET_K, mask, pass, fail),
            Test::AllBits { mask, .. } => {
                asm.stmt(ALU_AND_K, mask);
                asm.jump(JEQ_K, mask, pass, fail);
            }
        }
        self.leaves()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Label(usize);

enum Op {
    Stmt(Instruction),
    Jump {
        code: u16,
        k: u32,
        jt: Label,
        jf: Label,
    },
    Bind(Label),
}

/// A forward-only assembler with labels. A conditional jump whose target is out of u8 reach
/// gets a `ja` trampoline right after it (its branch offset then points at the trampoline).
/// Returns that are jumped to are shared: one RET per value, after all other code (every RET
/// costs the kernel conversion and JIT work at attach time).
#[derive(Default)]
struct Asm {
    ops: Vec<Op>,
    labels: usize,
    pool: BTreeMap<u32, Label>,
}

impl Asm {
    /// The shared `ret k`, to jump to.
    fn ret(&mut self, k: u32) -> Label {
        match self.pool.get(&k) {
            Some(&l) => l,
            None => {
                let l = self.label();
                self.pool.insert(k, l);
                l
            }
        }
    }

    fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels - 1)
    }

    fn bind(&mut self, label: Label) {
        self.ops.push(Op::Bind(label));
    }

    fn stmt(&mut self, code: u16, k: u32) {
        self.ops.push(Op::Stmt(Instruction {
            code,
            jt: 0,
            jf: 0,
            k,
        }));
    }

    fn jump(&mut self, code: u16, k: u32, jt: Label, jf: Label) {
        self.ops.push(Op::Jump { code, k, jt, jf });
    }

    fn finish(mut self) -> Result<Program, Error> {
        for (k, l) in std::mem::take(&mut self.pool) {
            self.bind(l);
            self.stmt(RET_K, k);
        }
        let internal = |what: &str| Error::Seccomp(format!("filter assembler: {what}"));
        // Where each label is bound (op index), to refuse backward or dangling jumps.
        let mut bound_at = vec![None; self.labels];
        for (i, op) in self.ops.iter().enumerate() {
            if let Op::Bind(l) = op {
                if bound_at[l.0].replace(i).is_some() {
                    return Err(internal("label bound twice"));
                }
            }
        }
        for (i, op) in self.ops.iter().enumerate() {
            if let Op::Jump { jt, jf, .. } = op {
                for l in [jt, jf] {
                    match bound_at[l.0] {
                        Some(b) if b > i => {}
                        _ => return Err(internal("jump backwards or to an unbound label")),
                    }
                }
            }
        }

        // far[i] = (jt needs a trampoline, jf needs one). Only ever switches on, so this
        // terminates; a trampoline grows the code, which can push other jumps out of reach.
        let mut far = vec![(false, false); self.ops.len()];
        let (mut pc_of, mut label_pc) = (vec![0usize; self.ops.len()], vec![0usize; self.labels]);
        loop {
            let mut pc = 0;
            for (i, op) in self.ops.iter().enumerate() {
                pc_of[i] = pc;
                match op {
                    Op::Stmt(_) => pc += 1,
                    Op::Jump { .. } => pc += 1 + far[i].0 as usize + far[i].1 as usize,
                    Op::Bind(l) => label_pc[l.0] = pc,
                }
            }
            let mut changed = false;
            for (i, op) in self.ops.iter().enumerate() {
                if let Op::Jump { jt, jf, .. } = op {
                    let next = pc_of[i] + 1;
                    if !far[i].0 && label_pc[jt.0] - next > u8::MAX as usize {
                        far[i].0 = true;
                        changed = true;
                    }
                    if !far[i].1 && label_pc[jf.0] - next > u8::MAX as usize {
                        far[i].1 = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }

        let mut out = Vec::with_capacity(self.ops.len());
        for (i, op) in self.ops.iter().enumerate() {
            match *op {
                Op::Stmt(ins) => out.push(ins),
                Op::Bind(_) => {}
                Op::Jump { code, k, jt, jf } => {
                    let p = pc_of[i];
                    let (ft, ff) = far[i];
                    let near = |l: Label| (label_pc[l.0] - (p + 1)) as u8;
                    out.push(Instruction {
                        code,
                        // A far branch falls to its trampoline: jt's at p+1, jf's after it.
                        jt: if ft { 0 } else { near(jt) },
                        jf: if ff { ft as u8 } else { near(jf) },
                        k,
                    });
                    for (is_far, target) in [(ft, jt), (ff, jf)] {
                        if is_far {
                            let here = out.len();
                            let offset = label_pc[target.0] - (here + 1);
                            out.push(Instruction {
                                code: JA,
                                jt: 0,
                                jf: 0,
                                k: u32::try_from(offset).map_err(|_| internal("jump too far"))?,
                            });
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::seccomp::rules;
    use cordon_policy::Network;

    /// `struct seccomp_data` as the kernel lays it out (little-endian).
    pub(crate) fn seccomp_data(arch: u32, nr: u32, args: [u64; 6]) -> [u8; 64] {
        let mut d = [0u8; 64];
        d[0..4].copy_from_slice(&nr.to_le_bytes());
        d[4..8].copy_from_slice(&arch.to_le_bytes());
        d[8..16].copy_from_slice(&0x7fff_dead_beefu64.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            d[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        d
    }

    /// A classic-BPF interpreter for the opcodes the generator emits; panics on anything else
    /// or on a jump outside the program.
    pub(crate) fn execute(prog: &[Instruction], data: &[u8; 64]) -> u32 {
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => {
                    let k = i.k as usize;
                    assert!(k & 3 == 0 && k + 4 <= data.len(), "bad load offset {k}");
                    a = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
                }
                ALU_AND_K => a &= i.k,
                JA => pc += i.k as usize,
                JEQ_K | JGT_K | JGE_K | JSET_K => {
                    let taken = match i.code {
                        JEQ_K => a == i.k,
                        JGT_K => a > i.k,
                        JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += if taken { i.jt } else { i.jf } as usize;
                }
                RET_K => return i.k,
                code => panic!("unexpected opcode {code:#x}"),
            }
        }
    }

    /// The kernel's `seccomp_is_const_allow`: runs with only nr and arch known; None where
    /// the program loads anything else (the syscall then runs the filter every time).
    fn const_allow(prog: &[Instruction], arch: u32, nr: u32) -> Option<bool> {
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                LD_W_ABS if i.k == NR_OFFSET => a = nr,
                LD_W_ABS if i.k == ARCH_OFFSET => a = arch,
                LD_W_ABS => return None,
                ALU_AND_K => a &= i.k,
                JA => pc += i.k as usize,
                JEQ_K => pc += if a == i.k { i.jt } else { i.jf } as usize,
                JGT_K => pc += if a > i.k { i.jt } else { i.jf } as usize,
                JGE_K => pc += if a >= i.k { i.jt } else { i.jf } as usize,
                JSET_K => pc += if a & i.k != 0 { i.jt } else { i.jf } as usize,
                RET_K => return Some(i.k == libc::SECCOMP_RET_ALLOW),
                code => panic!("unexpected opcode {code:#x}"),
            }
        }
    }

    fn holds(check: &ArgCheck, args: &[u64; 6]) -> bool {
        match *check {
            ArgCheck::Eq32 { index, value } => args[index as usize] as u32 == value,
            ArgCheck::Ne32 { index, value } => args[index as usize] as u32 != value,
            ArgCheck::HasBits { index, mask } => args[index as usize] & mask == mask,
            ArgCheck::HasBits32 { index, mask } => args[index as usize] as u32 & mask == mask,
        }
    }

    /// The rules evaluated directly, as the documentation states them.
    fn reference(rules: &[SyscallRule], arch: u32, nr: u32, args: &[u64; 6]) -> u32 {
        if arch != AUDIT_ARCH_NATIVE {
            return ret_errno(libc::EPERM);
        }
        #[cfg(target_arch = "x86_64")]
        if nr >= X32_SYSCALL_BIT {
            return ret_errno(libc::EPERM);
        }
        for rule in rules {
            if syscall_number(rule.name) == Some(nr as i64)
                && (rule.when.is_empty()
                    || rule
                        .when
                        .iter()
                        .any(|alt| alt.iter().all(|c| holds(c, args))))
            {
                return ret_errno(rule.errno);
            }
        }
        libc::SECCOMP_RET_ALLOW
    }

    /// Every instruction is reachable, known, and continues inside the program; with only
    /// forward jumps that means every path ends in a RET.
    fn validate(prog: &[Instruction]) {
        assert!(!prog.is_empty() && prog.len() <= MAX_INSTRUCTIONS);
        let mut reachable = vec![false; prog.len()];
        reachable[0] = true;
        for (pc, i) in prog.iter().enumerate() {
            assert!(reachable[pc], "unreachable instruction {pc}: {i:?}");
            let next: &[usize] = match i.code {
                RET_K => {
                    assert!(
                        i.k == libc::SECCOMP_RET_ALLOW
                            || i.k & libc::SECCOMP_RET_ACTION_FULL == libc::SECCOMP_RET_ERRNO,
                        "ret {:#x} at {pc}",
                        i.k
                    );
                    &[]
                }
                LD_W_ABS => {
                    assert!(i.k & 3 == 0 && i.k < 64, "load {} at {pc}", i.k);
                    &[pc + 1]
                }
                ALU_AND_K => &[pc + 1],
                JA => &[pc + 1 + i.k as usize],
                JEQ_K | JGT_K | JGE_K | JSET_K => &[pc + 1 + i.jt as usize, pc + 1 + i.jf as usize],
                code => panic!("unexpected opcode {code:#x} at {pc}"),
            };
            for &n in next {
                assert!(n < prog.len(), "instruction {pc} leaves the program");
                reachable[n] = true;
            }
        }
    }

    /// splitmix64: deterministic, no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn chance(&mut self, one_in: u64) -> bool {
            self.below(one_in) == 0
        }
        fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len() as u64) as usize]
        }
    }

    /// Makes `check` hold (or fail) by rewriting its argument, keeping unrelated bits random
    /// (including high garbage above a 32-bit value).
    fn force(rng: &mut Rng, args: &mut [u64; 6], check: &ArgCheck, hold: bool) {
        let garbage = rng.next() & !0xffff_ffff;
        match *check {
            ArgCheck::Eq32 { index, value } | ArgCheck::Ne32 { index, value } => {
                let eq = hold == matches!(check, ArgCheck::Eq32 { .. });
                let low = if eq {
                    value
                } else {
                    value ^ (1 << rng.below(32))
                };
                args[index as usize] = garbage | low as u64;
            }
            ArgCheck::HasBits { index, mask } => {
                let a = &mut args[index as usize];
                *a |= mask;
                if !hold && mask != 0 {
                    let bits: Vec<u32> = (0..64).filter(|b| mask >> b & 1 == 1).collect();
                    *a &= !(1u64 << rng.pick(&bits));
                }
            }
            ArgCheck::HasBits32 { index, mask } => {
                let a = &mut args[index as usize];
                *a = (*a & 0xffff_ffff) | garbage | mask as u64;
                if !hold && mask != 0 {
                    let bits: Vec<u32> = (0..32).filter(|b| mask >> b & 1 == 1).collect();
                    *a &= !(1u64 << rng.pick(&bits));
                }
            }
        }
    }

    fn random_args(rng: &mut Rng) -> [u64; 6] {
        let mut args = [0u64; 6];
        for a in &mut args {
            *a = match rng.below(4) {
                0 => 0,
                1 => u64::MAX,
                2 => rng.next() & 0xffff_ffff,
                _ => rng.next(),
            };
        }
        args
    }

    /// Compares the generated program with [`reference`] on numbers around every rule's,
    /// x32 and foreign-arch inputs, and arguments steered onto and off every check.
    fn agrees(rules: &[SyscallRule], rng: &mut Rng, trials_per_nr: usize) -> Program {
        let prog = generate(rules).unwrap();
        validate(&prog);
        let table: Vec<u32> = rules
            .iter()
            .filter_map(|r| syscall_number(r.name))
            .map(|n| n as u32)
            .collect();
        let mut nrs = vec![
            0,
            1,
            u32::MAX,
            u32::MAX - 1,
            0x3fff_ffff,
            0x4000_0000,
            0x8000_0000,
        ];
        for &n in &table {
            nrs.extend([
                n,
                n.wrapping_sub(1),
                n + 1,
                n | 0x4000_0000,
                n | 0x8000_0000,
            ]);
        }
        for _ in 0..50 {
            nrs.push(rng.below(1024) as u32);
            nrs.push(rng.next() as u32);
        }
        let other_arch = if cfg!(target_arch = "x86_64") {
            183 | 0x8000_0000 | 0x4000_0000
        } else {
            62 | 0x8000_0000 | 0x4000_0000
        };
        let arches = [AUDIT_ARCH_NATIVE, 3 | 0x4000_0000, other_arch, 0, u32::MAX];
        for &nr in &nrs {
            let alternatives: Vec<&Vec<ArgCheck>> = rules
                .iter()
                .filter(|r| syscall_number(r.name) == Some(nr as i64))
                .flat_map(|r| r.when.iter())
                .collect();
            for t in 0..trials_per_nr {
                let arch = if t % 8 == 7 {
                    rng.pick(&arches)
                } else {
                    AUDIT_ARCH_NATIVE
                };
                let mut args = random_args(rng);
                if !alternatives.is_empty() {
                    // Steer onto one alternative (maybe breaking one check), or scatter.
                    let alt = rng.pick(&alternatives);
                    if rng.chance(2) {
                        for c in alt {
                            force(rng, &mut args, c, true);
                        }
                        if !alt.is_empty() && rng.chance(2) {
                            let c = rng.pick(alt);
                            force(rng, &mut args, &c, false);
                        }
                    } else {
                        for alt in &alternatives {
                            for c in alt.iter() {
                                if rng.chance(3) {
                                    let hold = rng.chance(2);
                                    force(rng, &mut args, c, hold);
                                }
                            }
                        }
                    }
                }
                let data = seccomp_data(arch, nr, args);
                assert_eq!(
                    execute(&prog, &data),
                    reference(rules, arch, nr, &args),
                    "arch {arch:#x} nr {nr} args {args:x?}"
                );
            }
        }
        prog
    }

    #[test]
    fn cordons_rules_match_their_direct_evaluation() {
        let mut rng = Rng(1);
        for network in [Network::Deny, Network::Allow, Network::Proxy] {
            agrees(&rules(network), &mut rng, 200);
        }
    }

    #[test]
    fn rules_that_matter_get_the_expected_answers() {
        let prog = generate(&rules(Network::Deny)).unwrap();
        let nr = |name| syscall_number(name).unwrap() as u32;
        let run = |name, args| execute(&prog, &seccomp_data(AUDIT_ARCH_NATIVE, nr(name), args));
        let eperm = ret_errno(libc::EPERM);
        let allow = libc::SECCOMP_RET_ALLOW;
        let high = 0xdead_0000_0000_0000u64;
        assert_eq!(run("ioctl", [0, high | 0x5412, 0, 0, 0, 0]), eperm);
        assert_eq!(run("ioctl", [0, 0x5413, 0, 0, 0, 0]), allow);
        assert_eq!(run("clone", [0x1000_0000 | 0x11, 0, 0, 0, 0, 0]), eperm);
        assert_eq!(run("clone", [0x0100_0000 | 0x11, 0, 0, 0, 0, 0]), allow);
        assert_eq!(run("openat", [0, 0, 0, high | 0o4755, 0, 0]), eperm);
        assert_eq!(run("openat", [0, 0, 0, 0o755, 0, 0]), allow);
        assert_eq!(run("fchmodat", [0, 0, high | 0o2755, 0, 0, 0]), eperm);
        assert_eq!(
            run("socketpair", [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]),
            allow
        );
        assert_eq!(
            run("socketpair", [libc::AF_INET as u64, 1, 0, 0, 0, 0]),
            eperm
        );
        assert_eq!(run("socket", [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]), eperm);
        assert_eq!(run("clone3", [0; 6]), ret_errno(libc::ENOSYS));
        assert_eq!(run("openat2", [0; 6]), ret_errno(libc::ENOSYS));
        assert_eq!(run("unshare", [0; 6]), eperm);
        let read = seccomp_data(AUDIT_ARCH_NATIVE, libc::SYS_read as u32, [0; 6]);
        assert_eq!(execute(&prog, &read), allow);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            execute(
                &prog,
                &seccomp_data(AUDIT_ARCH_NATIVE, 0x4000_0000 | 272, [0; 6])
            ),
            eperm
        );
    }

    #[test]
    fn random_rule_sets_match_their_direct_evaluation() {
        // Several of these have consecutive numbers, which share leaves when blocks agree.
        let names = [
            "ioctl",
            "clone",
            "openat",
            "socket",
            "socketpair",
            "mount",
            "umount2",
            "ptrace",
            "fchmod",
            "fchmodat",
            "chroot",
            "unshare",
            "setns",
            "add_key",
            "request_key",
            "keyctl",
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
            "open_tree",
            "move_mount",
            "fsopen",
        ];
        let errnos = [libc::EPERM, libc::EPERM, libc::ENOSYS, libc::EACCES];
        let values = [0, 1, 0x5412, 0x541c, 0xffff_ffff, 0x8000_0000];
        let mut rng = Rng(2);
        for _ in 0..300 {
            let mut rules = Vec::new();
            for _ in 0..1 + rng.below(25) {
                let mut when = Vec::new();
                if !rng.chance(3) {
                    let flags = rng.chance(3); // clone-style: one bit of a shared word each
                    for _ in 0..1 + rng.below(4) {
                        if flags {
                            let (index, bit) = (rng.below(2) as u8, rng.below(3));
                            when.push(vec![if rng.chance(2) {
                                ArgCheck::HasBits {
                                    index,
                                    mask: 1 << (bit * 20),
                                }
                            } else {
                                ArgCheck::HasBits32 {
                                    index,
                                    mask: 1 << bit,
                                }
                            }]);
                            continue;
                        }
                        let alt = (0..rng.below(4))
                            .map(|_| {
                                let index = rng.below(6) as u8;
                                let value = if rng.chance(2) {
                                    rng.pick(&values)
                                } else {
                                    rng.next() as u32
                                };
                                let mask = match rng.below(5) {
                                    0 => 0,
                                    1 => 1u64 << rng.below(64),
                                    2 => rng.next() & rng.next(),
                                    3 => rng.next() & 0xffff_ffff & rng.next(),
                                    _ => (1u64 << rng.below(64)) | (1 << rng.below(64)),
                                };
                                match rng.below(4) {
                                    0 => ArgCheck::Eq32 { index, value },
                                    1 => ArgCheck::Ne32 { index, value },
                                    2 => ArgCheck::HasBits { index, mask },
                                    _ => ArgCheck::HasBits32 {
                                        index,
                                        mask: mask as u32,
                                    },
                                }
                            })
                            .collect();
                        when.push(alt);
                    }
                }
                rules.push(SyscallRule {
                    name: rng.pick(&names),
                    errno: rng.pick(&errnos),
                    when,
                    why: "test",
                });
            }
            agrees(&rules, &mut rng, 40);
        }
    }

    #[test]
    fn first_matching_rule_wins() {
        let rule = |errno, when| SyscallRule {
            name: "ioctl",
            errno,
            when,
            why: "test",
        };
        let rules = [
            rule(
                libc::EACCES,
                vec![vec![ArgCheck::Eq32 { index: 1, value: 7 }]],
            ),
            rule(libc::ENOSYS, vec![]),
            rule(libc::EPERM, vec![]), // unreachable: ENOSYS above is unconditional
        ];
        let prog = generate(&rules).unwrap();
        validate(&prog);
        let nr = syscall_number("ioctl").unwrap() as u32;
        let run = |a1| {
            execute(
                &prog,
                &seccomp_data(AUDIT_ARCH_NATIVE, nr, [0, a1, 0, 0, 0, 0]),
            )
        };
        assert_eq!(run(7), ret_errno(libc::EACCES));
        assert_eq!(run(8), ret_errno(libc::ENOSYS));

        // Single-bit tests of one word are merged into one JSET only within one errno.
        let flag = |mask| vec![vec![ArgCheck::HasBits { index: 0, mask }]];
        let rules = [
            rule(libc::EACCES, flag(1)),
            rule(libc::EACCES, flag(2)),
            rule(libc::ENOSYS, flag(4)),
        ];
        let prog = generate(&rules).unwrap();
        validate(&prog);
        let run = |a0| {
            execute(
                &prog,
                &seccomp_data(AUDIT_ARCH_NATIVE, nr, [a0, 0, 0, 0, 0, 0]),
            )
        };
        assert_eq!(run(2), ret_errno(libc::EACCES));
        assert_eq!(run(4), ret_errno(libc::ENOSYS));
        assert_eq!(run(5), ret_errno(libc::EACCES));
        assert_eq!(run(8), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn far_targets_go_through_ja() {
        let mut rng = Rng(3);
        // socketpair is not in this list, so everything below is reachable.
        let mut rules = rules(Network::Allow);
        // A leaf far longer than 255 instructions (the tree jumps over it, and early leaves
        // jump past it to the shared returns), and one alternative longer than 255 (its
        // first tests' failure jumps).
        rules.push(SyscallRule {
            name: "ioctl",
            errno: libc::EACCES,
            when: (0..100u32)
                .map(|v| {
                    vec![
                        ArgCheck::Eq32 {
                            index: 1,
                            value: 0x1000 + v,
                        },
                        ArgCheck::HasBits {
                            index: 2,
                            mask: 0x3_0000_0003,
                        },
                    ]
                })
                .collect(),
            why: "test",
        });
        rules.push(SyscallRule {
            name: "socketpair",
            errno: libc::EACCES,
            when: vec![(0..100u32)
                .map(|v| ArgCheck::HasBits32 {
                    index: (v % 6) as u8,
                    mask: 0x11 << (v % 20),
                })
                .collect()],
            why: "test",
        });
        rules.sort_by(|a, b| a.name.cmp(b.name));
        let prog = agrees(&rules, &mut rng, 400);
        assert!(prog.len() > 1000);
        // The socketpair block: its first failure jump lands more than 255 further on.
        let far_from = |pc: usize| {
            let i = prog[pc];
            (i.code == JSET_K || i.code == JEQ_K)
                && (i.jt == 0 || i.jf == 0 || i.jf == 1)
                && prog[pc + 1].code == JA
                && prog[pc + 1].k > 255
        };
        assert!((0..prog.len() - 1).any(far_from), "no trampoline emitted");
    }

    #[test]
    fn refuses_what_it_cannot_compile() {
        let rule = |errno, when| SyscallRule {
            name: "ioctl",
            errno,
            when,
            why: "test",
        };
        let huge = (0..4200)
            .map(|v| vec![ArgCheck::Eq32 { index: 1, value: v }])
            .collect();
        let refusal = |rules: &[SyscallRule]| match generate(rules) {
            Err(Error::Seccomp(m)) => m,
            other => panic!("expected Error::Seccomp, got {other:?}"),
        };
        let e = refusal(&[rule(libc::EPERM, huge)]);
        assert!(e.contains("more than the kernel's 4096"), "{e}");
        // errno 0 means success.
        let e = refusal(&[rule(0, vec![])]);
        assert_eq!(e, "ioctl: errno 0 out of range");
        let e = refusal(&[rule(70000, vec![])]);
        assert_eq!(e, "ioctl: errno 70000 out of range");
        let bad_index = vec![vec![ArgCheck::Eq32 { index: 6, value: 0 }]];
        let e = refusal(&[rule(libc::EPERM, bad_index)]);
        assert_eq!(e, "ioctl: argument index 6 out of range");
        // A name cordon does not know fails closed: never a rule silently left out.
        let typo = SyscallRule {
            name: "ptrase",
            ..rule(libc::EPERM, vec![])
        };
        let e = refusal(&[rule(libc::EPERM, vec![]), typo]);
        assert_eq!(e, "ptrase: no such system call on this architecture");
    }

    #[test]
    fn structure_of_cordons_program() {
        for network in [Network::Deny, Network::Allow, Network::Proxy] {
            let prog = generate(&rules(network)).unwrap();
            validate(&prog);
            // The arch check comes first, and its miss is a refusal.
            assert_eq!(prog[0].code, LD_W_ABS);
            assert_eq!(prog[0].k, ARCH_OFFSET);
            assert_eq!((prog[1].code, prog[1].k), (JEQ_K, AUDIT_ARCH_NATIVE));
            let miss = prog[2 + prog[1].jf as usize];
            assert_eq!((miss.code, miss.k), (RET_K, ret_errno(libc::EPERM)));
            // Returns are shared: one RET per distinct value.
            let mut rets: Vec<u32> = prog
                .iter()
                .filter(|i| i.code == RET_K)
                .map(|i| i.k)
                .collect();
            let n = rets.len();
            rets.sort();
            rets.dedup();
            assert_eq!(rets.len(), n, "duplicate RETs");
        }
    }

    /// What keeps attaching cheap: the kernel can decide every number outside the table from
    /// nr and arch alone (cached as allowed), and never any number inside it.
    #[test]
    fn numbers_outside_the_table_are_constant_allow() {
        let rules = rules(Network::Deny);
        let prog = generate(&rules).unwrap();
        let table: Vec<u32> = rules
            .iter()
            .filter_map(|r| syscall_number(r.name))
            .map(|n| n as u32)
            .collect();
        for nr in 0..1024 {
            let expected = if table.contains(&nr) {
                None.or(const_allow(&prog, AUDIT_ARCH_NATIVE, nr).filter(|&a| !a))
            } else {
                Some(true)
            };
            assert_eq!(
                const_allow(&prog, AUDIT_ARCH_NATIVE, nr),
                expected,
                "nr {nr}"
            );
            assert_eq!(const_allow(&prog, 3 | 0x4000_0000, nr), Some(false));
        }
    }
}
