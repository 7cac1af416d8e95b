#!/bin/sh
# Regenerates the example waveform (VCD + GTKWave save file) and the screenshot GTKWave
# itself makes of it, headless. Needs gtkwave, xvfb (xvfb-run) and ImageMagick (import):
#   apt-get install -y gtkwave xvfb imagemagick
# Run from anywhere; MASCAR overrides the binary (default: target/release/mascar).
set -eu
cd "$(dirname "$0")/.."
MASCAR=${MASCAR:-target/release/mascar}
EX=waves/example-kmeans-1-mascar
# Stops at max_cycles on purpose (exit 1 after writing the VCD): the RTL engine would take
# minutes for the whole kernel.
"$MASCAR" run -k kmeans-1 -s mascar --sms 1 --engine rtl \
    --vcd "$EX.vcd" --vcd-window 15230..15380 --set max_cycles=15380 || true
test -s "$EX.vcd" && test -s "$EX.gtkw"
# GTKWave loads the dump and its save file, screenshot.tcl zooms and marks; the root
# window (GTKWave's alone, 1600x900) is grabbed once drawn, then GTKWave is closed.
xvfb-run -a -s "-screen 0 1600x900x24" sh -c '
    gtkwave -S waves/screenshot.tcl "$1.vcd" "$1.gtkw" >/dev/null 2>&1 &
    pid=$!
    sleep 8
    import -window root "$1.png"
    kill "$pid"
' sh "$EX"
echo "wrote $EX.vcd, $EX.gtkw and $EX.png"
