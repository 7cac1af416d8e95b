// Formal properties of mascar_reexec_queue, proved by `mascar rtl prove` with ABC's PDR or
// k-induction on the AIGER model yosys writes (src/rtl/prove.rs). Hand-written; not
// generated.
//
// A shadow model below rebuilds, from the inputs alone, which entries are valid, each
// entry's warp, the age order and the retry bits (the arming policy, from the spec), and the
// assertions compare the queue's outputs with it. Only the port contract reads an output
// (`warps`, as the SM does before a push); the `probe_*` ports read internal registers for
// the invariants that make properties inductive, never in place of the shadow. CHECK selects the property (one proof
// each); the shadow model is the same in every proof.
//
// Port contract (assumed, because the SM guarantees it and the block cannot check it):
// - `depth` is a run constant in 1..D and `entries` its mask of the first `depth` entries
//   (the harness sets both once per run; `full` is defined against `depth`);
// - a push happens only when `alloc_valid` (the SM pushes into `alloc`, `ldst.rs`), for a
//   warp id below 2H, and only for a warp whose `warps` bit is clear (the SM admits one
//   entry per warp, `q.warps >> warp & 1 == 0`).
// Everything else is free: frees of any entry (valid or not, the count bug), refusals,
// free pulses, mode and owner changes, the head, and the synchronous reset in any cycle
// (the shadow model empties with it, so every property also covers a mid-run reset).
module formal_queue #(
    parameter H = 4,
    parameter D = 8,
    parameter CHECK = 0
) (
    input clock,
    input reset,
    input [6:0] depth_in,
    input mp,
    input owner_valid,
    input [5:0] owner,
    input mshr_freed,
    input miss_queue_freed,
    input head_first,
    input head_ready,
    input refused,
    input free_valid,
    input [5:0] free_entry,
    input push_valid,
    input [5:0] push_warp
);
    // A run constant: the first cycle's value, held.
    reg started = 0;
    reg [6:0] depth_r = 0;
    wire [6:0] depth = started ? depth_r : depth_in;
    always @(posedge clock) begin
        started <= 1;
        depth_r <= depth;
    end
    wire [63:0] mask64 = (64'd1 << depth) - 64'd1;
    wire [D-1:0] entries = mask64[D-1:0];

    // Kept so that a counterexample can show them whichever property is checked.
    (* keep *) wire select_valid, alloc_valid, full, almost_full;
    (* keep *) wire [D-1:0] armed;
    (* keep *) wire [5:0] select, alloc;
    wire [D-1:0] hit_only;
    wire [H-1:0] warps0, warps1;
    (* keep *) wire [6:0] occupancy;
    // Internal registers, read only, for the invariants that make properties inductive
    // (`mascar rtl prove` adds these ports to the emitted module: `prove::probes`).
    wire [D-1:0] probe_valid;
    wire [6:0] probe_count;
    wire [6*D-1:0] probe_warp;
    mascar_reexec_queue dut (
        .clock(clock),
        .reset(reset),
        .depth(depth),
        .entries(entries),
        .mp(mp),
        .owner_valid(owner_valid),
        .owner(owner),
        .mshr_freed(mshr_freed),
        .miss_queue_freed(miss_queue_freed),
        .head_first(head_first),
        .head_ready(head_ready),
        .refused(refused),
        .free_valid(free_valid),
        .free_entry(free_entry),
        .push_valid(push_valid),
        .push_warp(push_warp),
        .select_valid(select_valid),
        .select(select),
        .alloc_valid(alloc_valid),
        .alloc(alloc),
        .hit_only(hit_only),
        .armed(armed),
        .warps$0(warps0),
        .warps$1(warps1),
        .occupancy(occupancy),
        .full(full),
        .almost_full(almost_full),
        .probe_valid(probe_valid),
        .probe_count(probe_count),
        .probe_warp(probe_warp)
    );

    // ---- shadow model, from the ports ----
    reg [D-1:0] sv = 0;  // valid entries
    reg [6*D-1:0] sw = 0;  // each entry's warp
    reg [D*D-1:0] so = 0;  // so[e*D+f]: entry f is older than entry e
    reg mp_p = 0, owner_valid_p = 0;  // last cycle's mode and owner (a change arms all)
    reg [5:0] owner_p = 0;

    function automatic [5:0] warp_of(input [6*D-1:0] w, input integer e);
        warp_of = w[6*e+:6];
    endfunction
    function automatic [6:0] popcount(input [D-1:0] v);
        integer i;
        begin
            popcount = 0;
            for (i = 0; i < D; i = i + 1) popcount = popcount + v[i];
        end
    endfunction
    // The oldest entry of `set` (one-hot; zero if empty) under the shadow age order.
    function automatic [D-1:0] oldest(input [D-1:0] set, input [D*D-1:0] older);
        integer e;
        begin
            oldest = 0;
            for (e = 0; e < D; e = e + 1)
                if (set[e] && (set & older[e*D+:D]) == 0) oldest = oldest | ({{(D - 1) {1'b0}}, 1'b1} << e);
        end
    endfunction

    wire [D-1:0] one_hot_free = (free_valid && free_entry < D) ? ({{(D - 1) {1'b0}}, 1'b1} << free_entry) : {D{1'b0}};
    wire [D-1:0] freed = sv & one_hot_free;

    // The owner's entries, the hit-only set, and the lowest free usable entry.
    reg [D-1:0] owner_entries;
    reg [2*H-1:0] held;  // warps with a valid entry (warp 2j+s is lane j of scheduler s)
    reg [D-1:0] lowest_free;
    integer e, f;
    always @* begin
        owner_entries = 0;
        held = 0;
        for (e = 0; e < D; e = e + 1) begin
            if (sv[e] && owner_valid && warp_of(sw, e) == owner) owner_entries[e] = 1;
            if (sv[e] && warp_of(sw, e) < 2 * H) held[warp_of(sw, e)] = 1;
        end
        lowest_free = 0;
        for (e = D - 1; e >= 0; e = e - 1) if (!sv[e] && entries[e]) lowest_free = {{(D - 1) {1'b0}}, 1'b1} << e;
    end
    // The SM pushes into the allocated entry: the lowest free usable one (property 4 checks
    // that `alloc` is it).
    wire [D-1:0] pushed = push_valid ? lowest_free : {D{1'b0}};
    wire [D-1:0] hit_only_s = mp ? (sv & ~owner_entries) : {D{1'b0}};

    // The arming and retry policy (spec §5 "Retry order", and the queue's [design] rules in
    // src/rtl/reexec_queue.rs's header), kept here in the shadow's own retry bits `sr`, never
    // read from the block:
    // - an entry is worth a try this cycle (`can`) when its retry bit is set; on a free
    //   pulse (an MSHR or a miss-queue slot freed) also the oldest valid entry whose bit is
    //   clear and that is not hit-only; after a change of mode or owner every valid entry;
    // - the port goes to the oldest entry worth a try unless the LSU head goes first;
    // - what was worth a try stays armed; an accepted retry also arms the oldest valid entry
    //   that was not worth a try and is not hit-only (the chain); a refused retry loses its
    //   bit and goes to the back of the age order; a freed entry loses its bit; a pushed
    //   entry starts unarmed; a reset clears every bit.
    reg [D-1:0] sr = 0;
    wire change = (mp != mp_p) || (owner_valid != owner_valid_p) || (owner_valid && owner != owner_p);
    wire pulse = mshr_freed || miss_queue_freed;
    wire [D-1:0] credit = oldest(sv & ~sr & ~hit_only_s, so);
    wire [D-1:0] can = change ? sv : (sr | (pulse ? credit : {D{1'b0}}));
    wire take = (can != 0) && !(head_first && head_ready);
    wire [D-1:0] oldest_can = oldest(can, so);
    wire [D-1:0] chosen = take ? oldest_can : {D{1'b0}};
    wire [D-1:0] refused_s = refused ? chosen : {D{1'b0}};
    wire [D-1:0] chain = (take && !refused) ? oldest(sv & ~can & ~hit_only_s, so) : {D{1'b0}};
    wire [D-1:0] sr_next = (((sr | can) & ~refused_s) | chain) & ~one_hot_free;
    wire [D-1:0] tail = pushed | refused_s;  // to the back of the age order
    wire [D-1:0] select_hot = select < D ? ({{(D - 1) {1'b0}}, 1'b1} << select) : {D{1'b0}};
    wire [H-1:0] held0, held1;
    genvar j;
    generate
        for (j = 0; j < H; j = j + 1) begin : lanes
            assign held0[j] = held[2*j];
            assign held1[j] = held[2*j+1];
        end
    endgenerate
    wire push_warp_held = push_warp[0] ? warps1[push_warp[5:1]] : warps0[push_warp[5:1]];

    always @(posedge clock) begin
        if (reset) begin
            // A synchronous reset empties the queue: no entry survives it, none is armed,
            // the mode and owner seen last are an idle SM's (EP, none).
            sv <= 0;
            sw <= 0;
            so <= 0;
            sr <= 0;
            mp_p <= 0;
            owner_valid_p <= 0;
            owner_p <= 0;
        end else begin
            sr <= sr_next;
            sv <= (sv & ~freed) | pushed;
            for (e = 0; e < D; e = e + 1) begin
                if (pushed[e]) sw[6*e+:6] <= push_warp;
                // A pushed or refused entry becomes the youngest; the rest keep their order.
                so[e*D+:D] <= tail[e] ? (sv & ~freed & ~({{(D - 1) {1'b0}}, 1'b1} << e)) : (so[e*D+:D] & ~tail);
            end
            mp_p <= mp;
            owner_valid_p <= owner_valid;
            owner_p <= owner;
        end
    end

    // Bounded response (property 7): an entry worth a try is selected within `depth` cycles
    // (or freed first). Each cycle it waits, the port goes to an entry older than it that is
    // worth a try; that entry is refused (it loses its bit and goes behind it) or accepted
    // and, under the assumptions of property 7, freed. Either way one fewer entry is ahead of
    // it, pushes and refused entries join behind it, and at most depth - 1 entries are
    // older. The entry stays worth a try while it waits (what was worth a try stays armed).
    // wait_q[e] counts the consecutive cycles entry e was worth a try and not selected.
    // Built only in property 7's proof (its counters, assumptions and assertions), so that
    // the other proofs' models stay as they were.
    // Property 7 itself (the assertions): an entry worth a try (armed, or armed by this
    // cycle's free pulse) is selected within depth cycles of it, unless freed first. With
    // the ranking argument above stated as an invariant (a waiting entry is valid and armed,
    // and its wait plus the number of valid entries older than it is below depth), the valid
    // bits' invariant and the block's selection being the shadow's (property 3's), PDR
    // closes it (not in 300 s without them).
    generate
        if (CHECK == 7) begin : retry_bound
            localparam WQ = $clog2(D) + 1;  // counts to depth - 1 < D
            reg [WQ-1:0] wait_q[0:D-1];
            integer n;
            initial for (n = 0; n < D; n = n + 1) wait_q[n] = 0;
            always @(posedge clock)
                for (n = 0; n < D; n = n + 1)
                    wait_q[n] <= (!reset && can[n] && !(select_valid && select == n) && !one_hot_free[n]) ? wait_q[n] + 1 : 0;
            // Property 7's assumptions, which the bound needs (docs/verification.md): the
            // LD/ST head does not take the port (`car_retry = queue_first`, the default: with
            // `head_first` a stream of head requests can hold the port for ever), and an
            // accepted retry frees its entry in the same cycle (an entry's last line: always
            // with `car_entry = access`, one line per entry; an instruction entry holds the
            // port for each of its lines).
            always @* begin
                assume(!(head_first && head_ready));
                if (select_valid && !refused) assume(free_valid && free_entry == select);
            end
            always @* begin
                for (n = 0; n < D; n = n + 1) begin
                    assert(wait_q[n] < depth);
                    if (wait_q[n] != 0) begin
                        assert(sv[n] && sr[n]);
                        assert(wait_q[n] + popcount(sv & so[n*D+:D]) < depth);
                    end
                end
                assert(probe_valid == sv);
                assert(select_valid == take);
                if (select_valid) assert(select_hot == oldest_can);
            end
        end
    endgenerate

    // ---- port contract ----
    always @* begin
        assume(depth >= 1 && depth <= D);
        if (push_valid) begin
            assume(alloc_valid);
            assume(push_warp < 2 * H);
            assume(!push_warp_held);
        end
    end

    // ---- properties ----
    always @* begin
        // 1: the occupancy counts the valid entries; full and almost full follow it. With
        // the internal invariants that make it inductive (k-induction, at 48/32 too): the
        // valid bits are the shadow's and the count is their number.
        if (CHECK == 1) begin
            assert(probe_valid == sv);
            assert(probe_count == popcount(sv));
            assert(occupancy == popcount(sv));
            assert(full == (popcount(sv) == depth));
            assert(almost_full == (popcount(sv) + 1 >= depth));
        end
        // 2: the per-warp occupancy is exact, so the SM admits at most one entry per warp.
        // With the internal invariants that make it inductive (k-induction): the valid bits
        // are the shadow's, the count is their number, each valid entry holds its warp.
        if (CHECK == 2) begin
            assert(probe_valid == sv);
            assert(probe_count == popcount(sv));
            for (e = 0; e < D; e = e + 1) if (sv[e]) assert(probe_warp[6*e+:6] == warp_of(sw, e));
            assert(warps0 == held0 && warps1 == held1);
            for (e = 0; e < D; e = e + 1)
                for (f = e + 1; f < D; f = f + 1)
                    assert(!(sv[e] && sv[f] && warp_of(sw, e) == warp_of(sw, f)));
        end
        // 3: age is a strict total order over the valid entries, and the queue selects the
        // oldest entry worth a try under the shadow's arming policy (above) unless the head
        // goes first.
        if (CHECK == 3) begin
            // Irreflexive and total (of two valid entries exactly one is older); transitive
            // by construction (an entry moves only to the back).
            for (e = 0; e < D; e = e + 1) begin
                assert(!so[e*D+e]);
                for (f = e + 1; f < D; f = f + 1) if (sv[e] && sv[f]) assert(so[e*D+f] != so[f*D+e]);
            end
            assert(select_valid == take);
            if (select_valid) assert(select_hot == oldest_can);
        end
        // 4: a pushed entry stays valid until freed: never reallocated (alloc is the lowest
        // free usable entry), never dropped from what the queue shows (armed, hit-only and
        // selected entries are valid ones; in MP without an owner every valid entry shows
        // as hit-only).
        if (CHECK == 4) begin
            assert(alloc_valid == (lowest_free != 0));
            if (alloc_valid) assert(alloc < D && (({{(D - 1) {1'b0}}, 1'b1} << alloc) == lowest_free));
            assert((armed & ~sv) == 0);
            assert((hit_only & ~sv) == 0);
            if (select_valid) assert(select < D && sv[select]);
            if (mp && !owner_valid) assert(hit_only == sv);
        end
        // 5: hit-only marking: in MP every valid entry but the owner's, outside MP none; so a
        // selected non-owner entry in MP is always marked (the L1 then serves it only on a
        // load hit: `L1::load_hit_only`).
        if (CHECK == 5) begin
            assert(hit_only == hit_only_s);
            if (select_valid && mp && select < D && !owner_entries[select]) assert(hit_only[select]);
        end
        // 6: the retry bits follow the arming policy (the shadow's `sr`): which entry is
        // armed after a free pulse, after an accepted retry, after a refusal, a free, a push,
        // a change of mode or owner, a reset.
        // (The valid bits' invariant speeds PDR up.)
        if (CHECK == 6) begin
            assert(armed == sr);
            assert((sr & ~sv) == 0);
            assert(probe_valid == sv);
        end
    end
endmodule
