//! RTL twin of the scheduler block: the SM's two warp schedulers (LRR or GTO order, MAS's
//! Mem_Q/Comp_Q split), the EP/MP mode state machine and the owner register. The mode reads
//! saturation every cycle in EP and, with `check_at_handover`, in MP only when the owner
//! gives up the memory path (slide 11's flowchart); without it, every cycle.
//!
//! Per-warp signals are split by scheduler: lane `j` of scheduler `s` is warp `2j + s`, so
//! every vector is `H` bits (`H = warps / 2`, at most 32). Age is an age matrix over the
//! `2H` warps that keeps only its strict upper triangle (`H (2H - 1)` flip-flops): for warps
//! `a < b`, one bit says `b` is older than `a`; the lower half is its complement.
//!
//! Depth: a pick is a parallel one-hot, not a chain over the lanes. Each picker's order is a
//! total order on lanes (preferred queue first, then GTO's greedy warp and age or LRR's
//! lanes after the last issuer and the lower lane); a lane is picked when it is eligible and
//! no eligible lane comes before it. "Comes before" by age is the OR of the lane's stored
//! row (older lanes above it) and of the other rows' complemented bits (below it), both
//! OR-reductions. The scheduler that picks second (scheduler 1, or scheduler 0 when `first`
//! says scheduler 1 goes first: GPGPU-Sim 4.x's `Issue_Prio`) sees the other only through
//! the units its pick took (SP, SFU, LD/ST): both pickers are evaluated for each of the
//! eight combinations of taken units, and each one's variant is selected by the other's
//! variant-0 pick (its pick with every free unit). The one that goes first is told that
//! nothing was taken, so it runs variant 0; no select depends on a selected pick.

use rust_hdl::prelude::*;

/// One scheduler's pick: the first eligible lane of its order (LRR: lowest lane after the
/// last issuer; GTO: the greedy lane, else the oldest), Mem_Q or Comp_Q first under MAS.
/// `V` variants: variant `v` drops the lanes whose unit the other picker took, as named by
/// the bits of `v` (bit 0 SP, bit 1 SFU, bit 2 LD/ST); `var_sel` (one-hot) selects the
/// variant in force.
#[derive(LogicBlock)]
pub struct PickerRtl<const H: usize, const V: usize> {
    pub ready: Signal<In, Bits<H>>,
    pub alu: Signal<In, Bits<H>>,
    pub sfu: Signal<In, Bits<H>>,
    pub ldst: Signal<In, Bits<H>>,
    pub gload: Signal<In, Bits<H>>,
    pub wst_mem: Signal<In, Bits<H>>,
    pub wst_stall: Signal<In, Bits<H>>,
    /// Units free for this scheduler before the other picker's pick.
    pub sp_avail: Signal<In, Bit>,
    pub sfu_avail: Signal<In, Bit>,
    pub lsu_avail: Signal<In, Bit>,
    pub load_avail: Signal<In, Bit>,
    /// Units the other picker took (bit 0 SP, 1 SFU, 2 LD/ST); below `V` variants, 0.
    /// One-hot: the variant in force (bit `v`); bits at or above `V` are ignored.
    pub var_sel: Signal<In, Bits<8>>,
    /// `var_sel` for the order registers' next values: the same one-hot, or zero under reset
    /// (then the next values are the reset values, 0), so no reset gate follows the select.
    pub next_sel: Signal<In, Bits<8>>,
    pub policy_gto: Signal<In, Bit>,
    pub mas_enable: Signal<In, Bit>,
    pub mp: Signal<In, Bit>,
    /// LRR: the lanes after the last issuer (a register, so the order costs no compare).
    pub after: Signal<In, Bits<H>>,
    /// GTO: the greedy lane, one-hot (a register; 0 when there is none).
    pub greedy: Signal<In, Bits<H>>,
    /// Age rows (strict upper triangle): bit `i > j` of row `j` set when lane `i` is older
    /// than lane `j`.
    pub tri: [Signal<In, Bits<H>>; H],
    pub pick_valid: Signal<Out, Bit>,
    pub pick_lane: Signal<Out, Bits<6>>,
    pub pick_one_hot: Signal<Out, Bits<H>>,
    /// Variant 0's pick (one-hot), not through `var_sel`: the other picker's variant is chosen
    /// from it, so neither picker's variant select waits for the other's.
    pub first_one_hot: Signal<Out, Bits<H>>,
    /// Whether variant 0 picks: from its eligibility, beside the pick rather than after it.
    pub first_valid: Signal<Out, Bit>,
    /// The lanes above the pick: the next cycle's `after`. Made per variant beside its
    /// pick, so the register's input does not wait for the variant select and then a prefix.
    pub pick_after: Signal<Out, Bits<H>>,
    /// What GTO's order register keeps if this picker issues nothing: the greedy lane (none
    /// once that warp has exited). From registers and inputs. (LRR's keeps `after`.)
    pub greedy_keep: Signal<In, Bits<H>>,
    /// The order registers' next values: the lanes above the pick and the pick (one-hot)
    /// when it issues, else `after` / `greedy_keep`; zero when `next_sel` is. Chosen per
    /// variant beside its pick (the lanes above each variant's pick are made in parallel),
    /// so the registers' inputs wait for the variant select only, not for a prefix of the
    /// pick nor an issue / no-issue choice after it.
    pub next_after: Signal<Out, Bits<H>>,
    pub next_greedy: Signal<Out, Bits<H>>,
    ones: Constant<Bits<H>>,
    below: [Constant<Bits<H>>; H],
    above: [Constant<Bits<H>>; H],
    /// Lanes whose index has bit `b` set.
    id_bit: [Constant<Bits<H>>; 5],
    /// One-hot masks of lane `j` and of index bit `b`: bits are set by OR-ing these under a
    /// 1-bit condition, so no 1-bit value is widened in an expression (Verilator's WIDTH).
    lane_hot: [Constant<Bits<H>>; H],
    index_hot: [Constant<Bits<6>>; 5],
    var_sp: [Constant<Bit>; V],
    var_sfu: [Constant<Bit>; V],
    var_lsu: [Constant<Bit>; V],
    /// Eligible before the other picker: ready, not stalled, its unit free.
    base: Signal<Local, Bits<H>>,
    preferred: Signal<Local, Bits<H>>,
    /// LRR: per lane, the lanes that come before it (after the last issuer first, then the
    /// lower lane). A mask from registers, so the eligible lanes meet it in one AND-reduce.
    lrr_before: [Signal<Local, Bits<H>>; H],
    /// GTO: per lane, the lanes older than it (the row of the age triangle above it, the
    /// column below it: wiring only).
    older: [Signal<Local, Bits<H>>; H],
    /// Per lane, the lanes its queue's order puts before it (LRR: `lrr_before`; GTO: the
    /// greedy lane, then the older ones).
    order: [Signal<Local, Bits<H>>; H],
    /// Per lane, the lanes that win over it when both are eligible: the preferred queue
    /// first, then the order. From registers and the WST only, so it is ready before the
    /// eligibility it meets, and the same for every variant.
    before: [Signal<Local, Bits<H>>; H],
    /// Per variant: eligible lanes, and the pick (eligible, no eligible lane before it).
    elig: [Signal<Local, Bits<H>>; V],
    sel: [Signal<Local, Bits<H>>; V],
    lane: [Signal<Local, Bits<6>>; V],
    above_sel: [Signal<Local, Bits<H>>; V],
    /// Per variant: what the order registers keep when that variant issues nothing (zero
    /// when it issues; from registers and the eligibility, ready before its pick).
    keep_after: [Signal<Local, Bits<H>>; V],
    keep_greedy: [Signal<Local, Bits<H>>; V],
    /// The variant selects, in a block of their own: rust-hdl writes one `always` per module,
    /// and Verilator orders a block as a unit unless it splits into independent parts, so
    /// with the selects in the same block as the picks `var_sel` would feed
    /// `first_one_hot` there, and the other picker's select is made from that (a false
    /// loop, Verilator's UNOPTFLAT). Here only pass-through statements touch the selects.
    mux: PickerMuxRtl<H, V>,
}

/// The variant in force of a picker's `V` variants: its pick, and the order registers' next
/// values (by `next_sel`), each an AND-OR over the (exclusive) variants.
#[derive(LogicBlock)]
pub struct PickerMuxRtl<const H: usize, const V: usize> {
    pub var_sel: Signal<In, Bits<8>>,
    pub next_sel: Signal<In, Bits<8>>,
    /// Per variant: whether it issues, its lane, its pick (one-hot), the lanes above it, and
    /// what the order registers keep when it issues nothing.
    pub valid: [Signal<In, Bit>; V],
    pub lane: [Signal<In, Bits<6>>; V],
    pub sel: [Signal<In, Bits<H>>; V],
    pub above_sel: [Signal<In, Bits<H>>; V],
    pub keep_after: [Signal<In, Bits<H>>; V],
    pub keep_greedy: [Signal<In, Bits<H>>; V],
    pub pick_valid: Signal<Out, Bit>,
    pub pick_lane: Signal<Out, Bits<6>>,
    pub pick_one_hot: Signal<Out, Bits<H>>,
    pub pick_after: Signal<Out, Bits<H>>,
    pub next_after: Signal<Out, Bits<H>>,
    pub next_greedy: Signal<Out, Bits<H>>,
    /// Per variant: its next values if it is the one selected (`next_sel`), else zero.
    next_after_term: [Signal<Local, Bits<H>>; V],
    next_greedy_term: [Signal<Local, Bits<H>>; V],
}

impl<const H: usize, const V: usize> Default for PickerMuxRtl<H, V> {
    fn default() -> Self {
        Self {
            var_sel: Default::default(),
            next_sel: Default::default(),
            valid: std::array::from_fn(|_| Default::default()),
            lane: std::array::from_fn(|_| Default::default()),
            sel: std::array::from_fn(|_| Default::default()),
            above_sel: std::array::from_fn(|_| Default::default()),
            keep_after: std::array::from_fn(|_| Default::default()),
            keep_greedy: std::array::from_fn(|_| Default::default()),
            pick_valid: Default::default(),
            pick_lane: Default::default(),
            pick_one_hot: Default::default(),
            pick_after: Default::default(),
            next_after: Default::default(),
            next_greedy: Default::default(),
            next_after_term: std::array::from_fn(|_| Default::default()),
            next_greedy_term: std::array::from_fn(|_| Default::default()),
        }
    }
}

impl<const H: usize, const V: usize> Logic for PickerMuxRtl<H, V> {
    #[hdl_gen]
    fn update(&mut self) {
        // The order registers' next values: each variant's term gated by its select bit on
        // its own, then one OR over the terms (an OR tree, not a chain of muxes).
        for v in 0..V {
            self.next_after_term[v].next = 0.into();
            self.next_greedy_term[v].next = 0.into();
            if self.next_sel.val().get_bit(v) {
                self.next_after_term[v].next = self.above_sel[v].val() | self.keep_after[v].val();
                self.next_greedy_term[v].next = self.sel[v].val() | self.keep_greedy[v].val();
            }
        }
        self.next_after.next = self.next_after_term[0].val();
        self.next_greedy.next = self.next_greedy_term[0].val();
        for v in 1..V {
            self.next_after.next = self.next_after.val() | self.next_after_term[v].val();
            self.next_greedy.next = self.next_greedy.val() | self.next_greedy_term[v].val();
        }
        self.pick_valid.next = false;
        self.pick_lane.next = 0.into();
        self.pick_one_hot.next = 0.into();
        self.pick_after.next = 0.into();
        for v in 0..V {
            if self.var_sel.val().get_bit(v) {
                self.pick_valid.next = self.pick_valid.val() | self.valid[v].val();
                self.pick_lane.next = self.pick_lane.val() | self.lane[v].val();
                self.pick_one_hot.next = self.pick_one_hot.val() | self.sel[v].val();
                self.pick_after.next = self.pick_after.val() | self.above_sel[v].val();
            }
        }
    }
}

fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

fn bits_with(n: usize, f: impl Fn(usize) -> bool) -> u64 {
    (0..n).filter(|&i| f(i)).fold(0, |m, i| m | 1 << i)
}

impl<const H: usize, const V: usize> Default for PickerRtl<H, V> {
    fn default() -> Self {
        assert!(
            V == 1 || V == 8,
            "one variant, or one per combination of taken units"
        );
        Self {
            ready: Default::default(),
            alu: Default::default(),
            sfu: Default::default(),
            ldst: Default::default(),
            gload: Default::default(),
            wst_mem: Default::default(),
            wst_stall: Default::default(),
            sp_avail: Default::default(),
            sfu_avail: Default::default(),
            lsu_avail: Default::default(),
            load_avail: Default::default(),
            var_sel: Default::default(),
            next_sel: Default::default(),
            policy_gto: Default::default(),
            mas_enable: Default::default(),
            mp: Default::default(),
            after: Default::default(),
            greedy: Default::default(),
            tri: std::array::from_fn(|_| Default::default()),
            pick_valid: Default::default(),
            pick_lane: Default::default(),
            pick_one_hot: Default::default(),
            first_one_hot: Default::default(),
            first_valid: Default::default(),
            pick_after: Default::default(),
            greedy_keep: Default::default(),
            next_after: Default::default(),
            next_greedy: Default::default(),
            ones: Constant::new(low_mask(H).into()),
            below: std::array::from_fn(|j| Constant::new(low_mask(j).into())),
            above: std::array::from_fn(|j| Constant::new((low_mask(H) & !low_mask(j + 1)).into())),
            id_bit: std::array::from_fn(|b| Constant::new(bits_with(H, |j| j >> b & 1 == 1).into())),
            lane_hot: std::array::from_fn(|j| Constant::new((1u64 << j).into())),
            index_hot: std::array::from_fn(|b| Constant::new((1u64 << b).into())),
            var_sp: std::array::from_fn(|v| Constant::new(v & 1 != 0)),
            var_sfu: std::array::from_fn(|v| Constant::new(v & 2 != 0)),
            var_lsu: std::array::from_fn(|v| Constant::new(v & 4 != 0)),
            base: Default::default(),
            preferred: Default::default(),
            lrr_before: std::array::from_fn(|_| Default::default()),
            elig: std::array::from_fn(|_| Default::default()),
            older: std::array::from_fn(|_| Default::default()),
            order: std::array::from_fn(|_| Default::default()),
            before: std::array::from_fn(|_| Default::default()),
            sel: std::array::from_fn(|_| Default::default()),
            lane: std::array::from_fn(|_| Default::default()),
            above_sel: std::array::from_fn(|_| Default::default()),
            keep_after: std::array::from_fn(|_| Default::default()),
            keep_greedy: std::array::from_fn(|_| Default::default()),
            mux: Default::default(),
        }
    }
}

impl<const H: usize, const V: usize> Logic for PickerRtl<H, V> {
    #[hdl_gen]
    fn update(&mut self) {
        // Eligible: ready, not stalled by the WST, its unit free.
        self.base.next = self.ready.val() & !self.wst_stall.val();
        if !self.sp_avail.val() {
            self.base.next = self.base.val() & !self.alu.val();
        }
        if !self.sfu_avail.val() {
            self.base.next = self.base.val() & !self.sfu.val();
        }
        if !self.lsu_avail.val() {
            self.base.next = self.base.val() & !self.ldst.val();
        }
        if !self.load_avail.val() {
            self.base.next = self.base.val() & !self.gload.val();
        }
        // Mem_Q first in EP (requests leave early), Comp_Q first in MP; one queue without MAS.
        self.preferred.next = self.ones.val();
        if self.mas_enable.val() {
            if self.mp.val() {
                self.preferred.next = !self.wst_mem.val();
            } else {
                self.preferred.next = self.wst_mem.val();
            }
        }
        for j in 0..H {
            self.lrr_before[j].next = self.after.val() | self.below[j].val();
            if self.after.val().get_bit(j) {
                self.lrr_before[j].next = self.after.val() & self.below[j].val();
            }
        }
        for j in 0..H {
            self.older[j].next = self.tri[j].val() & self.above[j].val();
            for i in 0..H {
                // Lane i below j is older unless row i says j is (`below` masks i >= j off).
                if !self.tri[i].val().get_bit(j) {
                    self.older[j].next = self.older[j].val() | (self.lane_hot[i].val() & self.below[j].val());
                }
            }
            self.order[j].next = self.lrr_before[j].val();
            if self.policy_gto.val() {
                self.order[j].next = 0.into();
                if !self.greedy.val().get_bit(j) {
                    self.order[j].next = self.greedy.val() | self.older[j].val();
                }
            }
            // A preferred lane loses only to earlier preferred lanes; another lane loses to
            // every preferred lane and to earlier lanes.
            self.before[j].next = self.preferred.val() | self.order[j].val();
            if self.preferred.val().get_bit(j) {
                self.before[j].next = self.preferred.val() & self.order[j].val();
            }
        }
        for v in 0..V {
            self.elig[v].next = self.base.val();
            if self.var_sp[v].val() {
                self.elig[v].next = self.elig[v].val() & !self.alu.val();
            }
            if self.var_sfu[v].val() {
                self.elig[v].next = self.elig[v].val() & !self.sfu.val();
            }
            if self.var_lsu[v].val() {
                self.elig[v].next = self.elig[v].val() & !self.ldst.val();
            }
            // Picked: eligible, and no eligible lane wins over it.
            self.sel[v].next = self.elig[v].val();
            for j in 0..H {
                if (self.elig[v].val() & self.before[j].val()).any() {
                    self.sel[v].next = self.sel[v].val() & !self.lane_hot[j].val();
                }
            }
            // Lanes above the pick (lane 0 never is): a member below them is picked.
            self.above_sel[v].next = 0.into();
            for j in 1..H {
                if (self.sel[v].val() & self.below[j].val()).any() {
                    self.above_sel[v].next = self.above_sel[v].val() | self.lane_hot[j].val();
                }
            }
            // A variant that issues nothing keeps the order registers; one that issues has no
            // lane to keep (its pick and the lanes above it are then 0 otherwise, so OR-ing
            // the kept value in is exact).
            self.keep_after[v].next = 0.into();
            self.keep_greedy[v].next = 0.into();
            if !self.elig[v].val().any() {
                self.keep_after[v].next = self.after.val();
                self.keep_greedy[v].next = self.greedy_keep.val();
            }
            self.lane[v].next = 0.into();
            for b in 0..5 {
                if (self.sel[v].val() & self.id_bit[b].val()).any() {
                    self.lane[v].next = self.lane[v].val() | self.index_hot[b].val();
                }
            }
        }
        self.first_one_hot.next = self.sel[0].val();
        self.first_valid.next = self.elig[0].val().any();
        // The variant in force (`mux`).
        self.mux.var_sel.next = self.var_sel.val();
        self.mux.next_sel.next = self.next_sel.val();
        for v in 0..V {
            self.mux.valid[v].next = self.elig[v].val().any();
            self.mux.lane[v].next = self.lane[v].val();
            self.mux.sel[v].next = self.sel[v].val();
            self.mux.above_sel[v].next = self.above_sel[v].val();
            self.mux.keep_after[v].next = self.keep_after[v].val();
            self.mux.keep_greedy[v].next = self.keep_greedy[v].val();
        }
        self.pick_valid.next = self.mux.pick_valid.val();
        self.pick_lane.next = self.mux.pick_lane.val();
        self.pick_one_hot.next = self.mux.pick_one_hot.val();
        self.pick_after.next = self.mux.pick_after.val();
        self.next_after.next = self.mux.next_after.val();
        self.next_greedy.next = self.mux.next_greedy.val();
    }
}

/// The SM's scheduler block: two pickers, the order state, the age matrix, the mode state
/// machine and the owner register.
#[derive(LogicBlock)]
pub struct SchedulerRtl<const H: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (and the SM's kernel-launch clear): every register to its
    /// power-on value at the edge.
    pub reset: Signal<In, Bit>,
    /// Run constants: GTO order (else LRR); MAS on; MP reads saturation only when the owner
    /// gives up the path (else every cycle); cycles saturation counts after it ends.
    pub policy_gto: Signal<In, Bit>,
    pub mas_enable: Signal<In, Bit>,
    pub check_at_handover: Signal<In, Bit>,
    pub mp_exit_hold: Signal<In, Bits<16>>,
    /// Per scheduler, per lane: head may issue if its unit is free.
    pub ready: [Signal<In, Bits<H>>; 2],
    /// Per scheduler, per lane: head instruction class.
    pub alu: [Signal<In, Bits<H>>; 2],
    pub sfu: [Signal<In, Bits<H>>; 2],
    pub ldst: [Signal<In, Bits<H>>; 2],
    pub ldst_take: [Signal<In, Bits<H>>; 2],
    pub gload: [Signal<In, Bits<H>>; 2],
    /// The warp status table as read this cycle.
    pub wst_mem: [Signal<In, Bits<H>>; 2],
    pub wst_stall: [Signal<In, Bits<H>>; 2],
    /// From the WRC.
    pub owner_candidates: [Signal<In, Bits<H>>; 2],
    pub release_owner: Signal<In, Bit>,
    /// Warps launched (one CTA) / finished since the last cycle.
    pub launched: [Signal<In, Bits<H>>; 2],
    pub exited: [Signal<In, Bits<H>>; 2],
    pub sp_free: Signal<In, Bits<8>>,
    pub sfu_free: Signal<In, Bits<8>>,
    pub lsu_free: Signal<In, Bit>,
    pub load_slot_free: Signal<In, Bit>,
    /// Scheduler 1 picks first this cycle (GPGPU-Sim 4.x's `Issue_Prio`), else scheduler 0;
    /// the other gets the units left.
    pub first: Signal<In, Bit>,
    pub saturated: Signal<In, Bit>,
    /// The warp each scheduler issues.
    pub issue_valid: [Signal<Out, Bit>; 2],
    pub issue_warp: [Signal<Out, Bits<6>>; 2],
    /// Mode (Memory Priority) and owner registers.
    pub mp: Signal<Out, Bit>,
    pub owner_valid: Signal<Out, Bit>,
    pub owner: Signal<Out, Bits<6>>,
    pub picker0: PickerRtl<H, 8>,
    pub picker1: PickerRtl<H, 8>,
    mp_r: DFF<Bit>,
    hold_r: DFF<Bits<16>>,
    owner_valid_r: DFF<Bit>,
    owner_r: DFF<Bits<6>>,
    /// Per scheduler: the lanes after LRR's last issuer, and GTO's greedy lane (one-hot).
    /// Kept as lane masks rather than indices, so the pickers read the order without a
    /// compare per lane, and either may pick first without a prefix before its pick.
    after_r: [DFF<Bits<H>>; 2],
    greedy_r: [DFF<Bits<H>>; 2],
    /// Age matrix, strict upper triangle over warps `a < b` (bit set: `b` older than `a`;
    /// reset: the lower warp is older). Row `j` of `tri00` / `tri11`: lanes `i > j` of the
    /// same scheduler; of `tri01`: lanes `k >= j` of scheduler 1 against lane `j` of 0; of
    /// `tri10`: lanes `k > j` of scheduler 0 against lane `j` of 1. Other bits stay 0 and
    /// synthesise away.
    tri00: [DFF<Bits<H>>; H],
    tri01: [DFF<Bits<H>>; H],
    tri11: [DFF<Bits<H>>; H],
    tri10: [DFF<Bits<H>>; H],
    above: [Constant<Bits<H>>; H],
    at_or_above: [Constant<Bits<H>>; H],
    id_bit: [Constant<Bits<H>>; 5],
    /// One-hot masks of lane `j`, index bit `b` and variant `v`, the units each variant
    /// drops, and the constants compared with (typed, so no comparison widens: Verilator's
    /// WIDTH lint).
    lane_hot: [Constant<Bits<H>>; H],
    index_hot: [Constant<Bits<6>>; 5],
    var_hot: [Constant<Bits<8>>; 8],
    var_sp: [Constant<Bit>; 8],
    var_sfu: [Constant<Bit>; 8],
    var_lsu: [Constant<Bit>; 8],
    one8: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    /// Lanes of scheduler 0 whose pick takes the SP / SFU / LD-ST unit from scheduler 1
    /// (none when scheduler 1 goes first), and of scheduler 1 from scheduler 0 (none when
    /// scheduler 0 goes first): `first` is folded in here, before the picks, so no mux on it
    /// follows them.
    take_sp: Signal<Local, Bits<H>>,
    take_sfu: Signal<Local, Bits<H>>,
    take_lsu: Signal<Local, Bits<H>>,
    take1_sp: Signal<Local, Bits<H>>,
    take1_sfu: Signal<Local, Bits<H>>,
    take1_lsu: Signal<Local, Bits<H>>,
    /// Per variant, the lanes of scheduler 0 whose pick leaves scheduler 1 that variant
    /// (`var_lanes`), and of scheduler 1 for scheduler 0 (`var0_lanes`); known before the
    /// picks, so each variant-0 pick meets them in one AND-OR.
    var_lanes: [Signal<Local, Bits<H>>; 8],
    var0_lanes: [Signal<Local, Bits<H>>; 8],
    /// The variant of scheduler 1 in force, one-hot (from scheduler 0's variant-0 pick),
    /// and of scheduler 0 (from scheduler 1's). The one that goes first gets variant 0.
    var_sel: Signal<Local, Bits<8>>,
    var0_sel: Signal<Local, Bits<8>>,
    /// `var_lanes` outside reset (zero under it), and the variant select they give: zero
    /// under reset, so scheduler 1's order registers take their reset value through the
    /// select itself. From `var_lanes` and `reset`, ready before scheduler 0's pick.
    run_lanes: [Signal<Local, Bits<H>>; 8],
    next_sel: Signal<Local, Bits<8>>,
    /// Per scheduler, the greedy lane kept when it issues nothing: none once that warp has
    /// exited. Computed here and written to the picker in one assignment, so the picker's
    /// input does not pass through an intermediate value in an event simulator (the picker
    /// reads it and this block reads the picker's outputs).
    greedy_keep: [Signal<Local, Bits<H>>; 2],
    /// Owner pick: per scheduler, the column half of "an older candidate" from each
    /// scheduler's candidates, and the one-hot oldest candidate.
    col_00: Signal<Local, Bits<H>>,
    col_10: Signal<Local, Bits<H>>,
    col_11: Signal<Local, Bits<H>>,
    col_01: Signal<Local, Bits<H>>,
    owner_sel0: Signal<Local, Bits<H>>,
    owner_sel1: Signal<Local, Bits<H>>,
    owner_pick_valid: Signal<Local, Bit>,
    owner_lane: Signal<Local, Bits<6>>,
    owner_pick: Signal<Local, Bits<6>>,
    /// Saturated, or within the hold after it.
    sat_held: Signal<Local, Bit>,
    mp_next: Signal<Local, Bit>,
}

impl<const H: usize> Default for SchedulerRtl<H> {
    fn default() -> Self {
        assert!((1..=32).contains(&H), "1 to 32 lanes per scheduler");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            policy_gto: Default::default(),
            mas_enable: Default::default(),
            check_at_handover: Default::default(),
            mp_exit_hold: Default::default(),
            ready: Default::default(),
            alu: Default::default(),
            sfu: Default::default(),
            ldst: Default::default(),
            ldst_take: Default::default(),
            gload: Default::default(),
            wst_mem: Default::default(),
            wst_stall: Default::default(),
            owner_candidates: Default::default(),
            release_owner: Default::default(),
            launched: Default::default(),
            exited: Default::default(),
            sp_free: Default::default(),
            sfu_free: Default::default(),
            lsu_free: Default::default(),
            load_slot_free: Default::default(),
            first: Default::default(),
            saturated: Default::default(),
            issue_valid: Default::default(),
            issue_warp: Default::default(),
            mp: Default::default(),
            owner_valid: Default::default(),
            owner: Default::default(),
            picker0: Default::default(),
            picker1: Default::default(),
            mp_r: Default::default(),
            hold_r: Default::default(),
            owner_valid_r: Default::default(),
            owner_r: Default::default(),
            after_r: Default::default(),
            greedy_r: Default::default(),
            tri00: std::array::from_fn(|_| Default::default()),
            tri01: std::array::from_fn(|_| Default::default()),
            tri11: std::array::from_fn(|_| Default::default()),
            tri10: std::array::from_fn(|_| Default::default()),
            above: std::array::from_fn(|j| Constant::new((low_mask(H) & !low_mask(j + 1)).into())),
            at_or_above: std::array::from_fn(|j| Constant::new((low_mask(H) & !low_mask(j)).into())),
            id_bit: std::array::from_fn(|b| Constant::new(bits_with(H, |j| j >> b & 1 == 1).into())),
            lane_hot: std::array::from_fn(|j| Constant::new((1u64 << j).into())),
            index_hot: std::array::from_fn(|b| Constant::new((1u64 << b).into())),
            var_hot: std::array::from_fn(|v| Constant::new((1u64 << v).into())),
            var_sp: std::array::from_fn(|v| Constant::new(v & 1 != 0)),
            var_sfu: std::array::from_fn(|v| Constant::new(v & 2 != 0)),
            var_lsu: std::array::from_fn(|v| Constant::new(v & 4 != 0)),
            one8: Constant::new(1u64.into()),
            one16: Constant::new(1u64.into()),
            take_sp: Default::default(),
            take_sfu: Default::default(),
            take_lsu: Default::default(),
            take1_sp: Default::default(),
            take1_sfu: Default::default(),
            take1_lsu: Default::default(),
            var_lanes: std::array::from_fn(|_| Default::default()),
            var0_lanes: std::array::from_fn(|_| Default::default()),
            var_sel: Default::default(),
            var0_sel: Default::default(),
            run_lanes: std::array::from_fn(|_| Default::default()),
            next_sel: Default::default(),
            greedy_keep: Default::default(),
            col_00: Default::default(),
            col_10: Default::default(),
            col_11: Default::default(),
            col_01: Default::default(),
            owner_sel0: Default::default(),
            owner_sel1: Default::default(),
            owner_pick_valid: Default::default(),
            owner_lane: Default::default(),
            owner_pick: Default::default(),
            sat_held: Default::default(),
            mp_next: Default::default(),
        }
    }
}

impl<const H: usize> Logic for SchedulerRtl<H> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mp_r, hold_r, owner_valid_r, owner_r);
        self.after_r[0].d.next = self.after_r[0].q.val();
        for s in 0..2 {
            self.after_r[s].clock.next = self.clock.val();
            self.greedy_r[s].clock.next = self.clock.val();
            self.greedy_r[s].d.next = self.greedy_r[s].q.val();
        }
        self.mp.next = self.mp_r.q.val();
        self.owner_valid.next = self.owner_valid_r.q.val();
        self.owner.next = self.owner_r.q.val();

        // Both pickers see every free unit; the one that goes second is evaluated for every
        // combination of units the first may take, and the first's pick selects one.
        self.picker0.ready.next = self.ready[0].val();
        self.picker0.alu.next = self.alu[0].val();
        self.picker0.sfu.next = self.sfu[0].val();
        self.picker0.ldst.next = self.ldst[0].val();
        self.picker0.gload.next = self.gload[0].val();
        self.picker0.wst_mem.next = self.wst_mem[0].val();
        self.picker0.wst_stall.next = self.wst_stall[0].val();
        self.picker0.sp_avail.next = self.sp_free.val().any();
        self.picker0.sfu_avail.next = self.sfu_free.val().any();
        self.picker0.lsu_avail.next = self.lsu_free.val();
        self.picker0.load_avail.next = self.load_slot_free.val();
        self.picker0.policy_gto.next = self.policy_gto.val();
        self.picker0.mas_enable.next = self.mas_enable.val();
        self.picker0.mp.next = self.mp_r.q.val();
        self.picker0.after.next = self.after_r[0].q.val();
        self.picker0.greedy.next = self.greedy_r[0].q.val();
        for s in 0..2 {
            self.greedy_keep[s].next = self.greedy_r[s].q.val();
            if (self.exited[s].val() & self.greedy_r[s].q.val()).any() {
                self.greedy_keep[s].next = 0.into();
            }
        }
        self.picker0.greedy_keep.next = self.greedy_keep[0].val();
        // Scheduler 0 keeps its registers in the form below (the proofs' planted bugs edit
        // it; its depth is within scheduler 1's); its picker's next values are not read.
        self.picker0.next_sel.next = self.var_hot[0].val();
        self.picker1.ready.next = self.ready[1].val();
        self.picker1.alu.next = self.alu[1].val();
        self.picker1.sfu.next = self.sfu[1].val();
        self.picker1.ldst.next = self.ldst[1].val();
        self.picker1.gload.next = self.gload[1].val();
        self.picker1.wst_mem.next = self.wst_mem[1].val();
        self.picker1.wst_stall.next = self.wst_stall[1].val();
        self.picker1.sp_avail.next = self.sp_free.val().any();
        self.picker1.sfu_avail.next = self.sfu_free.val().any();
        self.picker1.lsu_avail.next = self.lsu_free.val();
        self.picker1.load_avail.next = self.load_slot_free.val();
        // A unit is taken only when the first scheduler's pick uses the last free one; the
        // scheduler that goes second takes nothing from the other.
        self.take_sp.next = 0.into();
        self.take1_sp.next = 0.into();
        if self.sp_free.val() == self.one8.val() {
            if self.first.val() {
                self.take1_sp.next = self.alu[1].val();
            } else {
                self.take_sp.next = self.alu[0].val();
            }
        }
        self.take_sfu.next = 0.into();
        self.take1_sfu.next = 0.into();
        if self.sfu_free.val() == self.one8.val() {
            if self.first.val() {
                self.take1_sfu.next = self.sfu[1].val();
            } else {
                self.take_sfu.next = self.sfu[0].val();
            }
        }
        self.take_lsu.next = 0.into();
        self.take1_lsu.next = 0.into();
        if self.first.val() {
            self.take1_lsu.next = self.ldst_take[1].val();
        } else {
            self.take_lsu.next = self.ldst_take[0].val();
        }
        // Each variant select is met by the other picker's variant-0 pick only (never by a
        // pick through its own select), so there is no path picker0 -> picker1 -> picker0.
        self.var_sel.next = 0.into();
        self.var0_sel.next = 0.into();
        self.next_sel.next = 0.into();
        for v in 0..8 {
            self.var_lanes[v].next = self.at_or_above[0].val();
            self.var0_lanes[v].next = self.at_or_above[0].val();
            if self.var_sp[v].val() {
                self.var_lanes[v].next = self.var_lanes[v].val() & self.take_sp.val();
                self.var0_lanes[v].next = self.var0_lanes[v].val() & self.take1_sp.val();
            } else {
                self.var_lanes[v].next = self.var_lanes[v].val() & !self.take_sp.val();
                self.var0_lanes[v].next = self.var0_lanes[v].val() & !self.take1_sp.val();
            }
            if self.var_sfu[v].val() {
                self.var_lanes[v].next = self.var_lanes[v].val() & self.take_sfu.val();
                self.var0_lanes[v].next = self.var0_lanes[v].val() & self.take1_sfu.val();
            } else {
                self.var_lanes[v].next = self.var_lanes[v].val() & !self.take_sfu.val();
                self.var0_lanes[v].next = self.var0_lanes[v].val() & !self.take1_sfu.val();
            }
            if self.var_lsu[v].val() {
                self.var_lanes[v].next = self.var_lanes[v].val() & self.take_lsu.val();
                self.var0_lanes[v].next = self.var0_lanes[v].val() & self.take1_lsu.val();
            } else {
                self.var_lanes[v].next = self.var_lanes[v].val() & !self.take_lsu.val();
                self.var0_lanes[v].next = self.var0_lanes[v].val() & !self.take1_lsu.val();
            }
            if (self.picker0.first_one_hot.val() & self.var_lanes[v].val()).any() {
                self.var_sel.next = self.var_sel.val() | self.var_hot[v].val();
            }
            if (self.picker1.first_one_hot.val() & self.var0_lanes[v].val()).any() {
                self.var0_sel.next = self.var0_sel.val() | self.var_hot[v].val();
            }
            self.run_lanes[v].next = 0.into();
            if !self.reset.val() {
                self.run_lanes[v].next = self.var_lanes[v].val();
            }
            if (self.picker0.first_one_hot.val() & self.run_lanes[v].val()).any() {
                self.next_sel.next = self.next_sel.val() | self.var_hot[v].val();
            }
        }
        // No pick takes nothing.
        if !self.picker0.first_valid.val() {
            self.var_sel.next = self.var_sel.val() | self.var_hot[0].val();
            if !self.reset.val() {
                self.next_sel.next = self.next_sel.val() | self.var_hot[0].val();
            }
        }
        if !self.picker1.first_valid.val() {
            self.var0_sel.next = self.var0_sel.val() | self.var_hot[0].val();
        }
        self.picker0.var_sel.next = self.var0_sel.val();
        self.picker1.var_sel.next = self.var_sel.val();
        self.picker1.next_sel.next = self.next_sel.val();
        self.picker1.policy_gto.next = self.policy_gto.val();
        self.picker1.mas_enable.next = self.mas_enable.val();
        self.picker1.mp.next = self.mp_r.q.val();
        self.picker1.after.next = self.after_r[1].q.val();
        self.picker1.greedy.next = self.greedy_r[1].q.val();
        self.picker1.greedy_keep.next = self.greedy_keep[1].val();
        for j in 0..H {
            self.picker0.tri[j].next = self.tri00[j].q.val();
            self.picker1.tri[j].next = self.tri11[j].q.val();
        }
        self.issue_valid[0].next = self.picker0.pick_valid.val();
        self.issue_valid[1].next = self.picker1.pick_valid.val();
        self.issue_warp[0].next = self.picker0.pick_lane.val() << 1;
        self.issue_warp[1].next = (self.picker1.pick_lane.val() << 1) | self.index_hot[0].val();

        // Order state: the issuer becomes the last / greedy warp; a finished greedy warp
        // stops being greedy.
        if self.picker0.pick_valid.val() {
            self.after_r[0].d.next = self.picker0.pick_after.val();
            self.greedy_r[0].d.next = self.picker0.pick_one_hot.val();
        } else if (self.exited[0].val() & self.greedy_r[0].q.val()).any() {
            self.greedy_r[0].d.next = 0.into();
        }
        // Scheduler 1 (with scheduler 0 first, the deepest path: its variant waits for
        // scheduler 0's pick): the picker gives the next values, chosen per variant, so no
        // issue / no-issue mux and no reset gate follow the variant select. Same values as
        // scheduler 0's form above and its reset below (under reset the select is zero, and
        // so are the next values).
        self.after_r[1].d.next = self.picker1.next_after.val();
        self.greedy_r[1].d.next = self.picker1.next_greedy.val();
        // Age matrix: a launched warp is younger than every warp not launched with it and
        // older than the warps of its CTA at higher slots. For a < b: b launched, a is older;
        // only a launched, b is; else unchanged.
        for j in 0..H {
            self.tri00[j].clock.next = self.clock.val();
            self.tri01[j].clock.next = self.clock.val();
            self.tri11[j].clock.next = self.clock.val();
            self.tri10[j].clock.next = self.clock.val();
            self.tri00[j].d.next = self.tri00[j].q.val() & !self.launched[0].val() & self.above[j].val();
            self.tri01[j].d.next =
                self.tri01[j].q.val() & !self.launched[1].val() & self.at_or_above[j].val();
            self.tri11[j].d.next = self.tri11[j].q.val() & !self.launched[1].val() & self.above[j].val();
            self.tri10[j].d.next = self.tri10[j].q.val() & !self.launched[0].val() & self.above[j].val();
            if self.launched[0].val().get_bit(j) {
                self.tri00[j].d.next = !self.launched[0].val() & self.above[j].val();
                self.tri01[j].d.next = !self.launched[1].val() & self.at_or_above[j].val();
            }
            if self.launched[1].val().get_bit(j) {
                self.tri11[j].d.next = !self.launched[1].val() & self.above[j].val();
                self.tri10[j].d.next = !self.launched[0].val() & self.above[j].val();
            }
        }

        // MAS: the oldest owner candidate (no candidate of either scheduler is older), as a
        // one-hot per scheduler. Column halves: candidate lane i of scheduler s is older
        // than a later warp unless that warp's bit in row i says otherwise.
        self.col_00.next = 0.into();
        self.col_10.next = 0.into();
        self.col_11.next = 0.into();
        self.col_01.next = 0.into();
        for i in 0..H {
            if self.owner_candidates[0].val().get_bit(i) {
                // Lane i of 0 (warp 2i) against lanes j > i of 0 and lanes j >= i of 1.
                self.col_00.next = self.col_00.val() | (!self.tri00[i].q.val() & self.above[i].val());
                self.col_01.next = self.col_01.val() | (!self.tri01[i].q.val() & self.at_or_above[i].val());
            }
            if self.owner_candidates[1].val().get_bit(i) {
                // Lane i of 1 (warp 2i+1) against lanes j > i of 1 and lanes j > i of 0.
                self.col_11.next = self.col_11.val() | (!self.tri11[i].q.val() & self.above[i].val());
                self.col_10.next = self.col_10.val() | (!self.tri10[i].q.val() & self.above[i].val());
            }
        }
        self.owner_sel0.next = 0.into();
        self.owner_sel1.next = 0.into();
        for j in 0..H {
            if self.owner_candidates[0].val().get_bit(j)
                & !(self.owner_candidates[0].val() & self.tri00[j].q.val()).any()
                & !self.col_00.val().get_bit(j)
                & !(self.owner_candidates[1].val() & self.tri01[j].q.val()).any()
                & !self.col_10.val().get_bit(j)
            {
                self.owner_sel0.next = self.owner_sel0.val() | self.lane_hot[j].val();
            }
            if self.owner_candidates[1].val().get_bit(j)
                & !(self.owner_candidates[1].val() & self.tri11[j].q.val()).any()
                & !self.col_11.val().get_bit(j)
                & !(self.owner_candidates[0].val() & self.tri10[j].q.val()).any()
                & !self.col_01.val().get_bit(j)
            {
                self.owner_sel1.next = self.owner_sel1.val() | self.lane_hot[j].val();
            }
        }
        self.owner_pick_valid.next =
            self.owner_candidates[0].val().any() | self.owner_candidates[1].val().any();
        // Warp 2j+s: the lane of the one-hot (in either half), then the scheduler.
        self.owner_lane.next = 0.into();
        for b in 0..5 {
            if ((self.owner_sel0.val() | self.owner_sel1.val()) & self.id_bit[b].val()).any() {
                self.owner_lane.next = self.owner_lane.val() | self.index_hot[b].val();
            }
        }
        self.owner_pick.next = self.owner_lane.val() << 1;
        if self.owner_sel1.val().any() {
            self.owner_pick.next = self.owner_pick.val() | self.index_hot[0].val();
        }
        // Saturation as the mode machine reads it: the flag, or within the hold after it
        // (counted down in MP).
        self.sat_held.next = false;
        if self.mas_enable.val() {
            if self.saturated.val() {
                self.sat_held.next = true;
                self.hold_r.d.next = self.mp_exit_hold.val();
            } else if self.mp_r.q.val() & self.hold_r.q.val().any() {
                self.sat_held.next = true;
                self.hold_r.d.next = self.hold_r.q.val() - self.one16.val();
            }
        }
        // Mode: read every cycle in EP; in MP (at hand-over) only when the owner gives up the
        // path or none holds it yet, else MP and the owner stay. Leaving MP clears the owner.
        self.mp_next.next = self.sat_held.val();
        if self.check_at_handover.val()
            & self.mp_r.q.val()
            & !self.release_owner.val()
            & self.owner_valid_r.q.val()
        {
            self.mp_next.next = true;
        }
        self.mp_r.d.next = self.mp_next.val();
        if !self.mp_next.val() {
            self.owner_valid_r.d.next = false;
        } else if self.release_owner.val() | !self.owner_valid_r.q.val() {
            self.owner_valid_r.d.next = self.owner_pick_valid.val();
            self.owner_r.d.next = self.owner_pick.val();
        }
        // Synchronous reset: every register to its power-on value (EP, no owner, no last or
        // greedy warp, the lower warp older), whatever the cycle computed. Scheduler 1's
        // order registers get theirs through `next_sel` (zero under reset).
        if self.reset.val() {
            self.mp_r.d.next = false;
            self.hold_r.d.next = 0.into();
            self.owner_valid_r.d.next = false;
            self.owner_r.d.next = 0.into();
            self.after_r[0].d.next = 0.into();
            self.greedy_r[0].d.next = 0.into();
            for j in 0..H {
                self.tri00[j].d.next = 0.into();
                self.tri01[j].d.next = 0.into();
                self.tri11[j].d.next = 0.into();
                self.tri10[j].d.next = 0.into();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mascar::scheduler::tests::MODE_STEPS;

    fn settle(uut: &mut SchedulerRtl<4>) {
        assert!(simulate(uut, 200), "settles");
    }

    /// One cycle: inputs, settle, rising edge, settle, falling edge, settle; the mode and
    /// owner registers after it.
    fn cycle(
        uut: &mut SchedulerRtl<4>,
        saturated: bool,
        release: bool,
        candidates: u64,
    ) -> (bool, Option<u8>) {
        let halves = crate::rtl::harness::split(candidates);
        uut.owner_candidates[0].next = halves[0].into();
        uut.owner_candidates[1].next = halves[1].into();
        uut.saturated.next = saturated;
        uut.release_owner.next = release;
        settle(uut);
        uut.clock.next = true.into();
        settle(uut);
        uut.clock.next = false.into();
        settle(uut);
        uut.launched[0].next = 0.into();
        uut.launched[1].next = 0.into();
        let owner = uut.owner.val().to_u64() as u8;
        (uut.mp.val(), uut.owner_valid.val().then_some(owner))
    }

    #[test]
    fn mode_decided_at_hand_over_or_every_cycle_as_the_reference() {
        // The behavioural twin's transition table (`mascar::scheduler`), on the RTL block.
        for (m, at_handover) in [true, false].into_iter().enumerate() {
            let mut uut = SchedulerRtl::<4>::default();
            uut.connect_all();
            uut.mas_enable.next = true;
            uut.check_at_handover.next = at_handover;
            uut.mp_exit_hold.next = 0.into();
            uut.launched[0].next = 0b1111.into();
            uut.launched[1].next = 0b1111.into();
            cycle(&mut uut, false, false, 0);
            for (n, &((saturated, release, candidates), want)) in MODE_STEPS.iter().enumerate() {
                let got = cycle(&mut uut, saturated, release, candidates);
                assert_eq!(got, want[m], "at_handover {at_handover}, step {n}");
            }
        }
    }

    #[test]
    fn the_scheduler_named_first_takes_the_ldst_unit_as_the_reference() {
        // The behavioural twin's test (`mascar::scheduler`): warps 0 and 1 (lane 0 of each
        // scheduler) both want the one LD/ST slot; the scheduler `first` names gets it.
        for first in [false, true] {
            let mut uut = SchedulerRtl::<4>::default();
            uut.connect_all();
            for s in 0..2 {
                uut.ready[s].next = 1.into();
                uut.ldst[s].next = 1.into();
                uut.ldst_take[s].next = 1.into();
            }
            uut.sp_free.next = 2.into();
            uut.sfu_free.next = 1.into();
            uut.lsu_free.next = true;
            uut.load_slot_free.next = true;
            uut.first.next = first;
            settle(&mut uut);
            let issued = [uut.issue_valid[0].val(), uut.issue_valid[1].val()];
            assert_eq!(issued, [!first, first], "first {first}");
            let warp = uut.issue_warp[first as usize].val().to_u64();
            assert_eq!(warp, first as u64, "first {first}");
        }
    }

    #[test]
    fn scheduler_generates_verilog() {
        let mut uut = SchedulerRtl::<4>::default();
        uut.connect_all();
        let v = generate_verilog(&uut);
        std::fs::write("/tmp/sched4.v", &v).unwrap();
        assert!(v.contains("module top"));
    }
}
