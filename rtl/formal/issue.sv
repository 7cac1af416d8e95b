// Formal properties of mascar_issue_top (WRC -> WST -> scheduler), checked with yosys's own
// SAT solver (`sat -tempinduct`, run by `mascar rtl prove`). Hand-written; not generated.
//
// The wrapper sees the block through its ports only. CHECK selects the property. One port
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
    input saturated
);
    // Kept so that a counterexample can show them whichever property is checked.
    (* keep *) wire issue_valid0, issue_valid1, mp, owner_valid;
    (* keep *) wire [5:0] issue_warp0, issue_warp1, owner;
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
        .saturated(saturated),
        .issue_valid$0(issue_valid0),
        .issue_valid$1(issue_valid1),
        .issue_warp$0(issue_warp0),
        .issue_warp$1(issue_warp1),
        .mp(mp),
        .owner_valid(owner_valid),
        .owner(owner)
    );

    // ---- shadow model, from the ports ----
    // Last cycle's active warps (the owner register loads at the clock edge).
    reg [H-1:0] active_p0 = 0, active_p1 = 0;
    // The warp status table's stall bits as the WRC writes them (slide 11: in MP, with
    // stall_non_owners, every memory warp but the owner), written entries read through.
    reg [H-1:0] stall_r0 = 0, stall_r1 = 0;
    wire [H-1:0] owner_bit0, owner_bit1;
    genvar j;
    generate
        for (j = 0; j < H; j = j + 1) begin : lanes
            assign owner_bit0[j] = owner_valid && owner == 2 * j;
            assign owner_bit1[j] = owner_valid && owner == 2 * j + 1;
        end
    endgenerate
    wire [H-1:0] we0 = has_inst0 & active0, we1 = has_inst1 & active1;
    wire [H-1:0] mem0 = is_mem0 & we0, mem1 = is_mem1 & we1;
    wire stalling = mp && stall_non_owners;
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
    end
endmodule
