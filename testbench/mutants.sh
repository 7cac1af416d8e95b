#!/usr/bin/env bash
# Mutation check: plants each deliberate bug below, one at a time, in a scratch worktree of
# the committed HEAD (re-emitting rtl/ when the bug is in the rust-hdl blocks), runs the
# whole test suite, and prints a Markdown table of which tests caught it. Every mutant must
# be caught; a survivor is a hole in the suite.
#
#   testbench/mutants.sh [OUT.md]          # ~5 minutes per mutant on 2 cores
#   MUTANTS_PLANT_ONLY=1 testbench/mutants.sh   # only check that every mutant still applies
#   MUTANTS_ONLY="name ..." testbench/mutants.sh   # only these mutants
#   MUTANTS_ALL_TESTS=1 testbench/mutants.sh    # list every failing test, not just the first
#                                               # failing test binary's (much slower)
#   MUTANTS_TESTS="--test testbench formal::" testbench/mutants.sh   # only this part of the suite (the
#                                               # rtl-* mutants of the proofs: about 3 min each)
#
# The proofs' mutants (rtl-queue-accepted-retry-arms-nothing ... rtl-wrc-barrier-handover-with-requests-waiting) are
# also planted directly in the emitted Verilog by testbench/formal.rs
# (each_planted_bug_fails_its_proof), which names the proof that catches each.
#
# Needs git, perl and the test tools (.ci/run installs them). The worktree and its target
# directory live under $MUTANTS_DIR (default: a fresh temporary directory).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/dev/stdout}
base=${MUTANTS_DIR:-$(mktemp -d)}
tree="$base/tree"
export CARGO_TARGET_DIR="$base/target"
# The suite CI runs: with the Verilator engine's tests when Verilator is installed.
features=""
if command -v verilator >/dev/null; then
  features="--features verilator"
fi
git -C "$root" worktree add --detach --force "$tree" HEAD >/dev/null 2>&1
trap 'git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT

# Replaces the Perl regex FROM by the literal text TO in FILE; fails unless FROM occurs
# exactly once.
plant() {
  local file=$1
  FROM=$2 TO=$3 perl -0pi -e '$n = 0; $n++ while /$ENV{FROM}/g; die "pattern not found once in '"$file"' ($n)\n" if $n != 1; s/$ENV{FROM}/$ENV{TO}/' "$tree/$file"
}

# name | what it breaks | how it is planted
mutant() {
  case $1 in
    owner-kept-on-dependent-load)
      plant src/mascar/wrc.rs 'waits_on_own_load \|\| idle_path' 'idle_path' ;;
    owner-held-until-exit)
      plant src/gpu/sm/mod.rs 'let mas_active = self\.active & !\(self\.issued_all & !unsent\);' 'let mas_active = self.active; let _ = unsent;' ;;
    owner-at-barrier-hands-parked-request-over)
      plant src/mascar/wrc.rs 'let barrier_done = w\.at_barrier & !w\.mem_in_flight & bit != 0;' 'let barrier_done = w.at_barrier & bit != 0;' ;;
    wrc-no-quiet-handover)
      plant src/mascar/wrc.rs 'let path_free = w\.l1_quiet \|\| w\.head_blocked;' 'let path_free = w.head_blocked;' ;;
    wrc-no-blocked-head-handover)
      plant src/mascar/wrc.rs 'let path_free = w\.l1_quiet \|\| w\.head_blocked;' 'let path_free = w.l1_quiet;' ;;
    l1-flushed-between-kernels)
      plant src/gpu/mod.rs 'fresh\.l1\.next_kernel\(cfg\.flush_l1_between_kernels\)' 'fresh.l1.next_kernel(true)' ;;
    queue-two-entries-per-warp)
      plant src/gpu/sm/mod.rs 'held \|= warps & self\.gmem_head;' 'let _ = warps;'
      plant src/gpu/sm/ldst.rs 'let parks = !self\.lsu\.atomic && \(q\.warps >> warp & 1 == 0 \|\| own_entries\);' 'let parks = !self.lsu.atomic && (q.warps >> warp & 1 < 2 || own_entries);' ;;
    lrr-pointer-moves-without-issue)
      plant src/mascar/scheduler.rs 'None => \{\n(?=\s+if self\.greedy\[s\])' \
        $'None => {\n                    self.last[s] = (self.last[s] + 1) % 64;\n' ;;
    mshr-merge-off-by-one)
      plant src/gpu/mem/cache.rs '\(self\.counts\[i\] as usize\) < self\.merge' '(self.counts[i] as usize) <= self.merge' ;;
    rtl-queue-owner-ignores-valid)
      plant src/rtl/reexec_queue.rs '\n\s+& self\.valid_r\.q\.val\(\)\.get_bit\(e\)' '' ;;
    rtl-wrc-always-stalls-non-owners)
      plant src/rtl/top.rs 'self\.wrc\.stall_non_owners\.next = self\.stall_non_owners\.val\(\);' \
        'self.wrc.stall_non_owners.next = true;' ;;
    rtl-queue-count-ignores-valid)
      # Issue 17 §2: the count moves on every free, valid entry or not (needs the fix committed).
      plant src/rtl/reexec_queue.rs 'if self\.freed_valid\.val\(\) & !self\.pushed\.val\(\)' 'if self.free_valid.val() & !self.pushed.val()'
      plant src/rtl/reexec_queue.rs 'if !self\.freed_valid\.val\(\) & self\.pushed\.val\(\)' 'if !self.free_valid.val() & self.pushed.val()' ;;
    rtl-second-picker-ignores-last-sp)
      # Issue 17 §4: scheduler 1's variant choice forgets that scheduler 0 took the last SP lane.
      plant src/rtl/scheduler.rs 'self\.take_sp\.next = self\.alu\[0\]\.val\(\);' '' ;;
    rtl-owner-never-released)
      # Issue 17 §4: the owner register ignores the WRC's release (kept until MP ends).
      plant src/rtl/scheduler.rs '\} else if self\.release_owner\.val\(\) \| !self\.owner_valid_r\.q\.val\(\) \{' \
        '} else if !self.owner_valid_r.q.val() {' ;;
    rtl-reset-keeps-mode)
      # Issue 17 §2: the scheduler's reset leaves the mode register (MP stays MP).
      # (A reset that kept the age matrices instead is an equivalent mutant: every warp is
      # launched again before it can issue or own, and a launch rewrites its age rows.)
      plant src/rtl/scheduler.rs '\n\s+self\.mp_r\.d\.next = false;' '' ;;
    rtl-reset-keeps-queue-count)
      # Issue 17 §2: the queue's reset leaves its occupancy counter as it was.
      plant src/rtl/reexec_queue.rs '\n\s+self\.count_r\.d\.next = 0\.into\(\);' '' ;;
    rtl-queue-accepted-retry-arms-nothing)
      # Issue 32: an accepted retry no longer arms the next entry (queue-arming).
      plant src/rtl/reexec_queue.rs '\n\s+\| \(self\.chain_bit\.val\(\) & !self\.freed_bit\.val\(\)\)' '' ;;
    rtl-queue-refusal-keeps-retry)
      # Issue 32: a refusal no longer clears the retry bit (queue-arming).
      plant src/rtl/reexec_queue.rs '\(self\.retry_r\.q\.val\(\) \| self\.can\.val\(\)\) & !self\.refused_bit\.val\(\) & !self\.freed_bit\.val\(\);' \
        '(self.retry_r.q.val() | self.can.val()) & !self.freed_bit.val();' ;;
    rtl-lrr-pointer-moves-without-issue)
      # The LRR pointer goes back to lane 0 on a cycle without an issue (issue-order).
      plant src/rtl/scheduler.rs 'self\.after_r\[s\]\.d\.next = self\.after_r\[s\]\.q\.val\(\);' 'self.after_r[s].d.next = 0.into();' ;;
    rtl-mp-exit-hold-not-counted-down)
      # The MP exit hold is never counted down (mas-mode).
      plant src/rtl/scheduler.rs 'self\.hold_r\.d\.next = self\.hold_r\.q\.val\(\) - self\.one16\.val\(\);' 'self.hold_r.d.next = self.hold_r.q.val();' ;;
    rtl-lrr-fixed-priority)
      # Scheduler 0's LRR order forgets the last issuer: lane 0 first, a high lane starves
      # (lrr-bounded-wait).
      plant src/rtl/scheduler.rs 'self\.picker0\.after\.next = self\.after_r\[0\]\.q\.val\(\);' 'self.picker0.after.next = 0.into();' ;;
    rtl-queue-refusal-keeps-age)
      # Issue 32: a refused retry keeps its age (not sent to the back), so a free pulse every
      # cycle re-arms it ahead of the others (queue-retry-bound).
      plant src/rtl/reexec_queue.rs 'self\.tail_bit\.next = self\.pushed_bit\.val\(\) \| self\.refused_bit\.val\(\);' \
        'self.tail_bit.next = self.pushed_bit.val();' ;;
    rtl-owner-pick-ignores-older-lower-lanes)
      # Issue 32: the owner pick forgets the age triangle's column half within scheduler 0
      # (a lower, older lane), so two candidates are picked at once (owner-choice).
      plant src/rtl/scheduler.rs 'self\.col_00\.next = self\.col_00\.val\(\) \| \(!self\.tri00\[i\]\.q\.val\(\) & self\.above\[i\]\.val\(\)\);' \
        'self.col_00.next = self.col_00.val();' ;;
    rtl-wrc-barrier-handover-with-requests-waiting)
      # Issue 32: an owner of scheduler 0 at a barrier hands over before its own requests
      # have left (wrc-handover).
      plant src/rtl/wrc.rs '\(self\.at_barrier\[0\]\.val\(\) & !self\.mem_in_flight\[0\]\.val\(\) & self\.owner_bit\[0\]\.val\(\)\)' \
        '(self.at_barrier[0].val() & self.owner_bit[0].val())' ;;
    mas-mode-rechecked-every-cycle)
      plant src/mascar/scheduler.rs 'let check = self\.p\.mode_check == MasModeCheck::EveryCycle' 'let check = true'
      plant src/rtl/harness.rs 'issue\.check_at_handover\.next = base\.mode_check == MasModeCheck::Handover;' \
        'issue.check_at_handover.next = false;' ;;
    *) echo "unknown mutant $1" >&2; exit 2 ;;
  esac
}

describe() {
  case $1 in
    owner-kept-on-dependent-load) echo "WRC does not release the owner when its next instruction needs its own load" ;;
    queue-two-entries-per-warp) echo "CAR admits a second entry of a warp that already holds one" ;;
    lrr-pointer-moves-without-issue) echo "LRR pointer advances on a cycle without an issue" ;;
    mshr-merge-off-by-one) echo "an MSHR accepts one merge more than its limit" ;;
    rtl-queue-owner-ignores-valid) echo "RTL queue marks a stale (invalid) entry as the owner's" ;;
    rtl-wrc-always-stalls-non-owners) echo "RTL WRC ignores its parameter and stalls non-owners under hit_only" ;;
    owner-held-until-exit) echo "MAS owner keeps the memory path until its stores are acknowledged (issue 29 §1)" ;;
    owner-at-barrier-hands-parked-request-over) echo "MAS owner at a barrier hands over with its own request still parked (the bp-2 hold livelock, issue 29 §2)" ;;
    wrc-no-quiet-handover) echo "WRC never hands ownership to a warp waiting behind a quiet L1 (the MP-hold deadlock)" ;;
    wrc-no-blocked-head-handover) echo "WRC keeps the owner while a non-owner's refused request blocks the LD/ST head, until the L1 drains (issue 29)" ;;
    l1-flushed-between-kernels) echo "L1 contents are dropped between the kernels of a trace although no flush was asked for" ;;
    rtl-queue-count-ignores-valid) echo "RTL queue count changes on a free of an empty entry (a free with a push leaves it at 0 with one valid entry)" ;;
    rtl-second-picker-ignores-last-sp) echo "RTL scheduler 1 may pick an SP warp after scheduler 0 took the last SP lane" ;;
    rtl-owner-never-released) echo "RTL owner register ignores the WRC's release and keeps the owner until MP ends" ;;
    rtl-reset-keeps-mode) echo "RTL scheduler reset leaves the mode register as it was" ;;
    rtl-reset-keeps-queue-count) echo "RTL queue reset leaves the occupancy counter as it was" ;;
    rtl-queue-accepted-retry-arms-nothing) echo "RTL queue: an accepted retry no longer arms the next entry" ;;
    rtl-queue-refusal-keeps-retry) echo "RTL queue: a refused retry keeps its retry bit" ;;
    rtl-lrr-pointer-moves-without-issue) echo "RTL LRR pointer moves (to lane 0) on a cycle without an issue" ;;
    rtl-mp-exit-hold-not-counted-down) echo "RTL mode machine never counts the MP exit hold down" ;;
    rtl-lrr-fixed-priority) echo "RTL scheduler 0 ignores the last issuer under LRR (fixed priority, starvation)" ;;
    rtl-queue-refusal-keeps-age) echo "RTL queue: a refused retry keeps its age instead of going to the back (starves a younger armed entry)" ;;
    rtl-owner-pick-ignores-older-lower-lanes) echo "RTL owner pick ignores older lower lanes of scheduler 0 (two candidates picked at once)" ;;
    rtl-wrc-barrier-handover-with-requests-waiting) echo "RTL WRC: an owner at a barrier hands over with its own requests still waiting to leave" ;;
  esac
}

mutants=(owner-kept-on-dependent-load queue-two-entries-per-warp lrr-pointer-moves-without-issue
  mshr-merge-off-by-one rtl-queue-owner-ignores-valid rtl-wrc-always-stalls-non-owners
  wrc-no-quiet-handover l1-flushed-between-kernels mas-mode-rechecked-every-cycle
  owner-held-until-exit owner-at-barrier-hands-parked-request-over wrc-no-blocked-head-handover
  rtl-queue-count-ignores-valid rtl-second-picker-ignores-last-sp rtl-owner-never-released
  rtl-reset-keeps-mode rtl-reset-keeps-queue-count rtl-queue-accepted-retry-arms-nothing
  rtl-queue-refusal-keeps-retry rtl-lrr-pointer-moves-without-issue rtl-mp-exit-hold-not-counted-down
  rtl-lrr-fixed-priority rtl-queue-refusal-keeps-age rtl-owner-pick-ignores-older-lower-lanes
  rtl-wrc-barrier-handover-with-requests-waiting)
# MUTANTS_ONLY="a b" runs just those.
if [ -n "${MUTANTS_ONLY:-}" ]; then
  read -r -a mutants <<< "$MUTANTS_ONLY"
fi

{
  echo "| mutant | bug | caught | failing tests |"
  echo "|---|---|---|---|"
} > "$base/table.md"
for m in "${mutants[@]}"; do
  git -C "$tree" checkout --quiet -- .
  mutant "$m"
  echo "== $m: $(describe "$m")" >&2
  git -C "$tree" diff --stat >&2
  if [ -n "${MUTANTS_PLANT_ONLY:-}" ]; then
    continue
  fi
  # A mutant in the rust-hdl blocks is emitted into rtl/ too, so that it must be caught by
  # behaviour (lockstep, replay, proofs, properties), not by the stale-Verilog check.
  # The Verilog text snapshots (golden/verilog_*.snap) are refreshed the same way, for the
  # same reason: a text diff is not a behavioural catch.
  if git -C "$tree" diff --name-only | grep -q '^src/rtl/'; then
    (cd "$tree" && cargo run --release $features --quiet -- rtl emit &&
      INSTA_UPDATE=always cargo test --release $features --test testbench golden::generated_verilog) \
      > "$base/$m.emit.log" 2>&1 || true
  fi
  log="$base/$m.log"
  # By default cargo stops at the first failing test binary: a mutant the unit tests catch
  # stops there; otherwise the one integration binary (testbench/main.rs) runs whole.
  if (cd "$tree" && cargo test --release $features ${MUTANTS_ALL_TESTS:+--no-fail-fast} ${MUTANTS_TESTS:-}) > "$log" 2>&1; then
    caught="**no**"
    failed="(suite passed)"
  else
    caught="yes"
    failed=$(grep -E '^test .* \.\.\. FAILED$' "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | sort -u | paste -sd, - | sed 's/,/, /g')
    if [ -z "$failed" ]; then
      failed="(build failed: $(grep -m1 -E '^error' "$log" || echo see $log))"
    fi
  fi
  echo "| $m | $(describe "$m") | $caught | $failed |" >> "$base/table.md"
done
git -C "$tree" checkout --quiet -- .
cat "$base/table.md" > "$out"
if grep -q '\*\*no\*\*' "$base/table.md"; then
  echo "some mutants survived" >&2
  exit 1
fi
