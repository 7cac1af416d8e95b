// Formal properties of mascar_issue_top (WRC -> WST -> scheduler), proved by `mascar rtl
// prove` with ABC's PDR or k-induction on the AIGER model yosys writes (src/rtl/prove.rs).
// Hand-written; not generated.
//
// The wrapper sees the block through its ports, and the WRC's outputs to the scheduler
// (`probe_*`, added by `mascar rtl prove`: the WRC's own port struct in the behavioural twin,
// `WrcOut`) for property 9. CHECK selects the property. One port
// contract is assumed, because the SM guarantees it (ready = issuable & scoreboard clear &
// not held, and only an active warp has an issuable head): a ready warp has a head
// instruction and is active. Everything else is free in every cycle: run constants (order,
// MAS, mode check, hold, stall_non_owners), every per-cycle warp signal and the synchronous
// reset, which covers every run the SM can drive.
module formal_issue #(
    parameter H = 4,
    parameter D = 8,  // unused; every wrapper takes the same parameters
    parameter CHECK = 0
) (
    input clock,
    input reset,
    input policy_gto,
    input mas_enable,
    input check_at_handover,
    input [15:0] mp_exit_hold,
    input stall_non_owners,
    input [H-1:0] active0, active1,
    input [H-1:0] has_inst0, has_inst1,
    input [H-1:0] is_mem0, is_mem1,
    input [H-1:0] sb_ready0, sb_ready1,
    input [H-1:0] dep_load0, dep_load1,
    input [H-1:0] at_barrier0, at_barrier1,
    input [H-1:0] mem_in_flight0, mem_in_flight1,
    input l1_quiet,
    input head_blocked,
    input [H-1:0] ready0, ready1,
    input [H-1:0] alu0, alu1,
    input [H-1:0] sfu0, sfu1,
    input [H-1:0] ldst0, ldst1,
    input [H-1:0] ldst_take0, ldst_take1,
    input [H-1:0] gload0, gload1,
    input [H-1:0] launched0, launched1,
    input [H-1:0] exited0, exited1,
    input [7:0] sp_free,
    input [7:0] sfu_free,
    input lsu_free,
    input load_slot_free,
    input first,  // scheduler 1 picks first this cycle, else scheduler 0
    input saturated
);
    // Kept so that a counterexample can show them whichever property is checked.
    (* keep *) wire issue_valid0, issue_valid1, mp, owner_valid;
    (* keep *) wire [5:0] issue_warp0, issue_warp1, owner;
    // The WRC's outputs inside the block (read for property 9 only; `prove::probes`).
    (* keep *) wire probe_release;
    (* keep *) wire [H-1:0] probe_candidates0, probe_candidates1;
    mascar_issue_top dut (
        .clock(clock),
        .reset(reset),
        .policy_gto(policy_gto),
        .mas_enable(mas_enable),
        .check_at_handover(check_at_handover),
        .mp_exit_hold(mp_exit_hold),
        .stall_non_owners(stall_non_owners),
        .active$0(active0),
        .active$1(active1),
        .has_inst$0(has_inst0),
        .has_inst$1(has_inst1),
        .is_mem$0(is_mem0),
        .is_mem$1(is_mem1),
        .sb_ready$0(sb_ready0),
        .sb_ready$1(sb_ready1),
        .dep_load$0(dep_load0),
        .dep_load$1(dep_load1),
        .at_barrier$0(at_barrier0),
        .at_barrier$1(at_barrier1),
        .mem_in_flight$0(mem_in_flight0),
        .mem_in_flight$1(mem_in_flight1),
        .l1_quiet(l1_quiet),
        .head_blocked(head_blocked),
        .ready$0(ready0),
        .ready$1(ready1),
        .alu$0(alu0),
        .alu$1(alu1),
        .sfu$0(sfu0),
        .sfu$1(sfu1),
        .ldst$0(ldst0),
        .ldst$1(ldst1),
        .ldst_take$0(ldst_take0),
        .ldst_take$1(ldst_take1),
        .gload$0(gload0),
        .gload$1(gload1),
        .launched$0(launched0),
        .launched$1(launched1),
        .exited$0(exited0),
        .exited$1(exited1),
        .sp_free(sp_free),
        .sfu_free(sfu_free),
        .lsu_free(lsu_free),
        .load_slot_free(load_slot_free),
        .first(first),
        .saturated(saturated),
        .issue_valid$0(issue_valid0),
        .issue_valid$1(issue_valid1),
        .issue_warp$0(issue_warp0),
        .issue_warp$1(issue_warp1),
        .mp(mp),
        .owner_valid(owner_valid),
        .owner(owner),
        .probe_release(probe_release),
        .probe_candidates0(probe_candidates0),
        .probe_candidates1(probe_candidates1)
    );

    // ---- shadow model, from the ports ----
    // Last cycle's active warps (the owner register loads at the clock edge).
    reg [H-1:0] active_p0 = 0, active_p1 = 0;
    // The shadow's own mode and owner registers (spec §4; updated below, after the ages they
    // read). Every policy below reads these, never the block's `mp` / `owner` outputs.
    reg mp_s = 0;
    reg [15:0] hold_s = 0;
    reg ov_s = 0;
    reg [5:0] o_s = 0;
    // The warp status table's stall bits as the WRC writes them (slide 11: in MP, with
    // stall_non_owners, every memory warp but the owner), written entries read through.
    reg [H-1:0] stall_r0 = 0, stall_r1 = 0;
    wire [H-1:0] owner_bit0, owner_bit1;
    genvar j;
    generate
        for (j = 0; j < H; j = j + 1) begin : lanes
            assign owner_bit0[j] = ov_s && o_s == 2 * j;
            assign owner_bit1[j] = ov_s && o_s == 2 * j + 1;
        end
    endgenerate
    wire [H-1:0] we0 = has_inst0 & active0, we1 = has_inst1 & active1;
    wire [H-1:0] mem0 = is_mem0 & we0, mem1 = is_mem1 & we1;
    wire stalling = mp_s && stall_non_owners;
    wire [H-1:0] stall0 = (stall_r0 & ~we0) | ((stalling ? mem0 & ~owner_bit0 : {H{1'b0}}) & we0);
    wire [H-1:0] stall1 = (stall_r1 & ~we1) | ((stalling ? mem1 & ~owner_bit1 : {H{1'b0}}) & we1);
    // A reset clears the table (and the scheduler's registers: see property 3).
    reg reset_p = 0;
    always @(posedge clock) begin
        active_p0 <= active0;
        active_p1 <= active1;
        stall_r0 <= reset ? {H{1'b0}} : stall0;
        stall_r1 <= reset ? {H{1'b0}} : stall1;
        reset_p <= reset;
    end
    wire [4:0] lane0 = issue_warp0[5:1], lane1 = issue_warp1[5:1], owner_lane = owner[5:1];

    // The WRC's hand-over rules (spec §4, slide 11, and the [design] rules of
    // src/mascar/wrc.rs), from the inputs and the shadow owner. The owner releases when its
    // next instruction depends on its own load or it waits at a barrier, in both cases once
    // its requests have left; when it is no longer active (nothing left to issue or send);
    // or when the path is free (L1 quiet, or a non-owner's refused request blocks the LD/ST
    // head) and another warp's requests wait while it has none in flight.
    wire [H-1:0] waiting0 = mem_in_flight0 & active0 & ~owner_bit0, waiting1 = mem_in_flight1 & active1 & ~owner_bit1;
    wire path_free = l1_quiet || head_blocked;
    wire any_waiting = waiting0 != 0 || waiting1 != 0;
    wire idle_path = path_free && ((mem_in_flight0 & owner_bit0) == 0) && ((mem_in_flight1 & owner_bit1) == 0) && any_waiting;
    wire release_s = ov_s && (idle_path || (has_inst0 & dep_load0 & ~mem_in_flight0 & owner_bit0) != 0
        || (has_inst1 & dep_load1 & ~mem_in_flight1 & owner_bit1) != 0
        || (at_barrier0 & ~mem_in_flight0 & owner_bit0) != 0
        || (at_barrier1 & ~mem_in_flight1 & owner_bit1) != 0
        || ((active0 & owner_bit0) == 0 && (active1 & owner_bit1) == 0));
    // Owner candidates: a warp ready to issue a memory instruction (not the owner, its head
    // not waiting on its own load: "the first ready warp in Mem_Q"); with the path free and
    // requests waiting, the warps whose requests wait to leave instead (they need ownership
    // to send them).
    wire [H-1:0] cand0 = (path_free && any_waiting) ? waiting0 : mem0 & sb_ready0 & ~dep_load0 & ~owner_bit0;
    wire [H-1:0] cand1 = (path_free && any_waiting) ? waiting1 : mem1 & sb_ready1 & ~dep_load1 & ~owner_bit1;

    // ---- the issue stage's policies, from the spec (properties 4 to 6) ----
    // Nothing here is taken from the block: the mode and owner are the shadow's (above and
    // below), and the WST's op-type bits, each scheduler's order state (LRR's last issuer,
    // GTO's greedy warp, the warps' ages) and the picks are rebuilt from the inputs.
    reg [H-1:0] mem_r0 = 0, mem_r1 = 0;  // WST op type (next instruction is memory)
    wire [H-1:0] wmem0 = (mem_r0 & ~we0) | mem0, wmem1 = (mem_r1 & ~we1) | mem1;
    // Unit limits (spec §2: SP width 2, SFU width 1, one LD/ST per cycle; the scheduler
    // `first` names picks first, the other gets what it left: GPGPU-Sim 4.x's Issue_Prio,
    // scheduler 0 always in 3.2.2): a warp is eligible when ready, not stalled, and its unit
    // free. With every free unit (the first scheduler's eligibility):
    wire sp_ok = sp_free != 0, sfu_ok = sfu_free != 0;
    wire [H-1:0] full0 = ready0 & ~stall0 & (sp_ok ? {H{1'b1}} : ~alu0) & (sfu_ok ? {H{1'b1}} : ~sfu0)
        & (lsu_free ? {H{1'b1}} : ~ldst0) & (load_slot_free ? {H{1'b1}} : ~gload0);
    wire [H-1:0] full1 = ready1 & ~stall1 & (sp_ok ? {H{1'b1}} : ~alu1) & (sfu_ok ? {H{1'b1}} : ~sfu1)
        & (lsu_free ? {H{1'b1}} : ~ldst1) & (load_slot_free ? {H{1'b1}} : ~gload1);
    // MAS (spec §4): Mem_Q first in EP, Comp_Q first in MP; without MAS one queue.
    wire [H-1:0] pref0 = !mas_enable ? {H{1'b1}} : (mp_s ? ~wmem0 : wmem0);
    wire [H-1:0] pref1 = !mas_enable ? {H{1'b1}} : (mp_s ? ~wmem1 : wmem1);
    // Order state per scheduler: LRR's last issuer (none after reset: lane 0 first), GTO's
    // greedy warp (the last issuer until it exits), and the age order over all 2H warps:
    // old_s[a*2H+b] says warp b is older than warp a (a launch makes a warp younger than
    // every warp not launched with it; among warps launched together, and at reset, the
    // lower warp id is older).
    reg has_last0 = 0, has_last1 = 0, has_greedy0 = 0, has_greedy1 = 0;
    reg [4:0] last0 = 0, last1 = 0, greedy0 = 0, greedy1 = 0;
    reg [4*H*H-1:0] old_s;
    integer a, b;
    initial for (a = 0; a < 2 * H; a = a + 1) for (b = 0; b < 2 * H; b = b + 1) old_s[a*2*H+b] = b < a;
    wire [2*H-1:0] launched_w;
    generate
        for (j = 0; j < H; j = j + 1) begin : launch_bits
            assign launched_w[2*j] = launched0[j];
            assign launched_w[2*j+1] = launched1[j];
        end
    endgenerate
    // Lane i comes before lane l of scheduler s in its order (i != l).
    function automatic before(input gto, input integer s, input integer i, input integer l, input [H-1:0] pref,
                              input has_last, input [4:0] last, input has_greedy, input [4:0] greedy,
                              input [4*H*H-1:0] old);
        reg ai, al;
        begin
            if (pref[i] != pref[l]) before = pref[i];
            else if (gto) begin
                if (has_greedy && greedy == i) before = 1;
                else if (has_greedy && greedy == l) before = 0;
                else before = old[(2 * l + s) * 2 * H + 2 * i + s];
            end else begin
                // Circular from the lane after the last issuer: the lanes after it first,
                // then the others, each part in lane order.
                ai = has_last && i > last;
                al = has_last && l > last;
                before = (ai && !al) || (ai == al && i < l);
            end
        end
    endfunction
    // Only the proofs that read the picks (4, 7) build the order comparisons: lanes past HO
    // are left out elsewhere, which keeps the other proofs' elaboration small at 48 warps.
    localparam HO = (CHECK == 4 || CHECK == 7) ? H : 1;
    // The first eligible lane of scheduler s's order among `elig` (0 when none).
    function automatic [4:0] first_lane(input gto, input integer s, input [H-1:0] elig, input [H-1:0] pref,
                                        input has_last, input [4:0] last, input has_greedy, input [4:0] greedy,
                                        input [4*H*H-1:0] old);
        integer fi, fl;
        reg wins;
        begin
            first_lane = 0;
            for (fl = 0; fl < HO; fl = fl + 1) begin
                wins = elig[fl];
                for (fi = 0; fi < HO; fi = fi + 1)
                    if (fi != fl && elig[fi] && before(gto, s, fi, fl, pref, has_last, last, has_greedy, greedy, old)) wins = 0;
                if (wins) first_lane = fl;
            end
        end
    endfunction
    // The eligibility in force: the first scheduler's with every free unit, the other's with
    // the units the first one's pick left (SP and SFU by count, the LD/ST unit once).
    reg [H-1:0] elig0, elig1;
    reg pick0_valid, pick1_valid;
    reg [4:0] pick0, pick1;
    reg took_sp, took_sfu, took_lsu;
    integer i;
    always @* begin
        elig0 = full0;
        elig1 = full1;
        if (!first) begin
            pick0 = first_lane(policy_gto, 0, elig0, pref0, has_last0, last0, has_greedy0, greedy0, old_s);
            took_sp = elig0 != 0 && alu0[pick0];
            took_sfu = elig0 != 0 && sfu0[pick0];
            took_lsu = elig0 != 0 && ldst_take0[pick0];
            elig1 = ready1 & ~stall1 & (sp_free > took_sp ? {H{1'b1}} : ~alu1) & (sfu_free > took_sfu ? {H{1'b1}} : ~sfu1)
                & (lsu_free && !took_lsu ? {H{1'b1}} : ~ldst1) & (load_slot_free ? {H{1'b1}} : ~gload1);
            pick1 = first_lane(policy_gto, 1, elig1, pref1, has_last1, last1, has_greedy1, greedy1, old_s);
        end else begin
            pick1 = first_lane(policy_gto, 1, elig1, pref1, has_last1, last1, has_greedy1, greedy1, old_s);
            took_sp = elig1 != 0 && alu1[pick1];
            took_sfu = elig1 != 0 && sfu1[pick1];
            took_lsu = elig1 != 0 && ldst_take1[pick1];
            elig0 = ready0 & ~stall0 & (sp_free > took_sp ? {H{1'b1}} : ~alu0) & (sfu_free > took_sfu ? {H{1'b1}} : ~sfu0)
                & (lsu_free && !took_lsu ? {H{1'b1}} : ~ldst0) & (load_slot_free ? {H{1'b1}} : ~gload0);
            pick0 = first_lane(policy_gto, 0, elig0, pref0, has_last0, last0, has_greedy0, greedy0, old_s);
        end
        pick0_valid = elig0 != 0;
        pick1_valid = elig1 != 0;
    end
    always @(posedge clock) begin
        if (reset) begin
            mem_r0 <= 0;
            mem_r1 <= 0;
            has_last0 <= 0;
            has_last1 <= 0;
            has_greedy0 <= 0;
            has_greedy1 <= 0;
            last0 <= 0;
            last1 <= 0;
            greedy0 <= 0;
            greedy1 <= 0;
            for (a = 0; a < 2 * H; a = a + 1) for (b = 0; b < 2 * H; b = b + 1) old_s[a*2*H+b] <= b < a;
        end else begin
            mem_r0 <= wmem0;
            mem_r1 <= wmem1;
            if (pick0_valid) begin
                has_last0 <= 1;
                last0 <= pick0;
                has_greedy0 <= 1;
                greedy0 <= pick0;
            end else if (has_greedy0 && exited0[greedy0]) has_greedy0 <= 0;
            if (pick1_valid) begin
                has_last1 <= 1;
                last1 <= pick1;
                has_greedy1 <= 1;
                greedy1 <= pick1;
            end else if (has_greedy1 && exited1[greedy1]) has_greedy1 <= 0;
            for (a = 0; a < 2 * H; a = a + 1)
                for (b = 0; b < 2 * H; b = b + 1)
                    if (launched_w[a]) old_s[a*2*H+b] <= !launched_w[b] || b < a;
                    else if (launched_w[b]) old_s[a*2*H+b] <= 0;
        end
    end

    // Bounded response (property 7): under LRR, a warp eligible and in its scheduler's
    // preferred MAS queue (every warp without MAS) in consecutive cycles issues within H of
    // them: every cycle it waits, a preferred warp before it in circular order issues and the
    // order moves past that warp, closer to it. wait0/wait1 count, per lane, the consecutive
    // such cycles without an issue; any other cycle (or a change to GTO, or a reset) starts
    // over. No bound holds for the other warps: under GTO the greedy warp may issue every
    // cycle, and under MAS a preferred queue that never empties starves the other queue.
    reg [5:0] wait0 [0:H-1];
    reg [5:0] wait1 [0:H-1];
    wire lrr = !policy_gto;
    integer n, m;
    initial for (n = 0; n < H; n = n + 1) begin
        wait0[n] = 0;
        wait1[n] = 0;
    end
    always @(posedge clock)
        for (m = 0; m < H; m = m + 1) begin
            wait0[m] <= (!reset && lrr && elig0[m] && pref0[m] && !(issue_valid0 && lane0 == m)) ? wait0[m] + 1 : 0;
            wait1[m] <= (!reset && lrr && elig1[m] && pref1[m] && !(issue_valid1 && lane1 == m)) ? wait1[m] + 1 : 0;
        end

    // The MAS mode machine and the owner register (spec §4, slide 11): saturation is read
    // every cycle in EP and, with check_at_handover, in MP only when the owner hands over
    // (or there is none); saturation counts for mp_exit_hold cycles after the flag drops,
    // counted down in MP. In MP the owner stays until the WRC's rules above release it; then
    // (or with none) the oldest candidate becomes owner ("assign new owner warp"; none when
    // there is no candidate); leaving MP clears it. Age is the launch order in force this
    // cycle (`old_s`, before this cycle's launches take effect at the edge, as the block's
    // age matrix is; the reference twin stamps the launch first, which differs only for a
    // warp that is a candidate in its own launch cycle: the SM never drives that,
    // testbench/properties.rs).
    wire [2*H-1:0] cand_w;
    generate
        for (j = 0; j < H; j = j + 1) begin : cand_bits
            assign cand_w[2*j] = cand0[j];
            assign cand_w[2*j+1] = cand1[j];
        end
    endgenerate
    reg [5:0] owner_pick;
    integer c, d;
    always @* begin
        owner_pick = 0;
        for (c = 0; c < 2 * H; c = c + 1)
            if (cand_w[c] && (cand_w & old_s[c*2*H+:2*H]) == 0) owner_pick = c;
    end
    wire sat_held = mas_enable && (saturated || (mp_s && hold_s != 0));
    wire mp_next = sat_held || (check_at_handover && mp_s && ov_s && !release_s);
    always @(posedge clock) begin
        if (reset) begin
            mp_s <= 0;
            hold_s <= 0;
            ov_s <= 0;
            o_s <= 0;
        end else begin
            mp_s <= mp_next;
            if (mas_enable && saturated) hold_s <= mp_exit_hold;
            else if (mas_enable && mp_s && hold_s != 0) hold_s <= hold_s - 1;
            if (!mp_next) ov_s <= 0;
            else if (release_s || !ov_s) begin
                ov_s <= cand_w != 0;
                o_s <= owner_pick;
            end
        end
    end

    // ---- port contract ----
    always @* begin
        assume((ready0 & ~(has_inst0 & active0)) == 0);
        assume((ready1 & ~(has_inst1 & active1)) == 0);
    end

    // ---- properties ----
    always @* begin
        // 1: a valid owner was an active warp when it was chosen or last kept, and there is
        // an owner only in MP.
        if (CHECK == 1) begin
            if (owner_valid) begin
                assert(mp);
                assert(owner_lane < H);
                assert(owner[0] ? active_p1[owner_lane] : active_p0[owner_lane]);
            end
        end
        // 2: each scheduler issues only a ready warp of its own half whose stall bit is
        // clear.
        if (CHECK == 2) begin
            if (issue_valid0) begin
                assert(!issue_warp0[0] && lane0 < H);
                assert(ready0[lane0] && !stall0[lane0]);
            end
            if (issue_valid1) begin
                assert(issue_warp1[0] && lane1 < H);
                assert(ready1[lane1] && !stall1[lane1]);
            end
        end
        // 3: after a synchronous reset, whatever came before, the mode machine is at its
        // power-on state (EP, no owner).
        if (CHECK == 3) begin
            if (reset_p) assert(!mp && !owner_valid);
        end
        // 4: issue order: each scheduler issues exactly when one of its warps is eligible,
        // and then the first eligible warp of its order (MAS queue first, then LRR from the
        // lane after the last issuer, or GTO: the greedy warp, then the oldest).
        if (CHECK == 4) begin
            assert(issue_valid0 == pick0_valid);
            if (pick0_valid) assert(issue_warp0 == {pick0, 1'b0});
            assert(issue_valid1 == pick1_valid);
            if (pick1_valid) assert(issue_warp1 == {pick1, 1'b1});
        end
        // 5: unit limits: an issued warp's unit is free, after what the scheduler that went
        // first took (SP and SFU by count, the LD/ST unit once, a global load only with a
        // load slot); the first one sees every free unit.
        if (CHECK == 5) begin
            if (issue_valid0) begin
                if (alu0[lane0]) assert(sp_free >= 1 + (first && issue_valid1 && alu1[lane1]));
                if (sfu0[lane0]) assert(sfu_free >= 1 + (first && issue_valid1 && sfu1[lane1]));
                if (ldst0[lane0]) assert(lsu_free && !(first && issue_valid1 && ldst_take1[lane1]));
                if (gload0[lane0]) assert(load_slot_free);
            end
            if (issue_valid1) begin
                if (alu1[lane1]) assert(sp_free >= 1 + (!first && issue_valid0 && alu0[lane0]));
                if (sfu1[lane1]) assert(sfu_free >= 1 + (!first && issue_valid0 && sfu0[lane0]));
                if (ldst1[lane1]) assert(lsu_free && !(!first && issue_valid0 && ldst_take0[lane0]));
                if (gload1[lane1]) assert(load_slot_free);
            end
        end
        // 6: the mode machine: the block's mode is the spec's, cycle by cycle.
        if (CHECK == 6) assert(mp == mp_s);
        // 8: the owner choice: the block's owner register is the spec's, cycle by cycle
        // (which warp becomes owner, when it is kept, released, handed over or cleared).
        if (CHECK == 8) begin
            assert(owner_valid == ov_s);
            if (ov_s) assert(owner == o_s);
        end
        // 9: the WRC's outputs to the scheduler: its release of the owner and its owner
        // candidates are the hand-over rules' (above), from the inputs and the shadow owner.
        if (CHECK == 9) begin
            assert(probe_release == release_s);
            assert(probe_candidates0 == cand0 && probe_candidates1 == cand1);
        end
        // 7: bounded wait under LRR: no lane is eligible and preferred H cycles in a row
        // without issuing.
        if (CHECK == 7)
            for (i = 0; i < H; i = i + 1) begin
                assert(wait0[i] < H);
                assert(wait1[i] < H);
            end
    end
endmodule
