# GTKWave script for the example's screenshot (run by waves/screenshot.sh, headless):
# the save file has already loaded the signals, grouped model | RTL; this zooms to the
# part of the window with an owner change and an EP -> MP switch and marks them.
# GTKWave reads the dump's times in ps: cycle c is c * 1000.

# Owner w13 releases (wrc.release_owner) and w5 takes over at 15253; the MSHRs drain, MP
# ends at 15282 when w5 releases; saturated again at 15290, MP with owner w7 at 15291.
gtkwave::setZoomRangeTimes 15240000 15305000
gtkwave::setNamedMarker A 15253000 "owner w13 -> w5"
gtkwave::setNamedMarker B 15291000 "EP -> MP, owner w7"
gtkwave::setMarker 15291000
puts "screenshot.tcl: zoomed and marked"
