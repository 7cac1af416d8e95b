//! Plots of the compare report (plotters): speedup per class beside the paper's figures
//! (like slide 17), and per-kernel fraction of peak IPC with the LSU stall fraction (slide 5).
//!
//! Text is drawn with DejaVu Sans embedded in the binary (the `dejavu` crate) through plotters'
//! `ab_glyph` font backend, so PNGs get their labels on a machine without any system fonts.
//! Plots are rendered into memory and returned, for the caller to stage in an
//! [`OutputSet`](crate::report::OutputSet) with the command's other outputs.
//!
//! Font sizes: plotters' SVG backend writes `font-size` = size / 1.24, so every text here is
//! at least [`MIN_FONT`] (15 → 12.1 px in the SVG), readable at the plots' default size.

use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle, FontTransform};

use crate::report::compare::{ClassGroup, RunRecord, SpeedupTable};
use crate::workload::builtin::KernelClass;

const FONT: &str = "sans-serif";
const SPEEDUP_HEIGHT: u32 = 540;
const STALLS_HEIGHT: u32 = 560;

/// Registers the embedded font once; plotters' `ab_glyph` backend needs it for any text.
fn fonts() -> Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    ok.then_some(())
        .ok_or_else(|| anyhow!("the embedded DejaVu Sans font did not load"))
}

/// Colour of a scheduler's bars, fixed so every plot uses the same.
fn scheduler_color(name: &str) -> RGBColor {
    match name {
        "gto" => RGBColor(31, 119, 180),
        "owl" => RGBColor(255, 127, 14),
        "ccws" => RGBColor(44, 160, 44),
        "mas" => RGBColor(148, 103, 189),
        "car" => RGBColor(140, 86, 75),
        "mascar" => RGBColor(214, 39, 40),
        _ => RGBColor(127, 127, 127),
    }
}

/// Renders an SVG into memory: the caller stages it in an [`OutputSet`](crate::report::OutputSet),
/// so no plot is ever written at its final path before every output of the command is complete.
fn svg(size: (u32, u32), draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<()>) -> Result<String> {
    fonts()?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw(&root)?;
        root.present()?;
    }
    Ok(text)
}

/// Renders a PNG into memory (RGB pixels, then encoded).
fn png(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Result<()>,
) -> Result<Vec<u8>> {
    use image::ImageEncoder;
    fonts()?;
    let (w, h) = size;
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, size).into_drawing_area();
        draw(&root)?;
        root.present()?;
    }
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(&pixels, w, h, image::ColorType::Rgb8)
        .context("encoding the PNG")?;
    Ok(bytes)
}

/// Grouped bars of the per-class speedups, as SVG text.
pub fn speedup_svg(t: &SpeedupTable) -> Result<String> {
    svg(speedup_size(t), |root| draw_speedup(root, t))
}

/// Grouped bars of the per-class speedups, as PNG bytes.
pub fn speedup_png(t: &SpeedupTable) -> Result<Vec<u8>> {
    png(speedup_size(t), |root| draw_speedup(root, t))
}

/// Per-kernel fraction of peak IPC and LSU stall fraction of the baseline runs ("lrr", or the
/// first record's scheduler when there is no lrr run), as SVG text.
pub fn stalls_svg(records: &[RunRecord]) -> Result<String> {
    let bars = stall_bars(records, stalls_scheduler(records));
    svg(stalls_size(bars.1.len()), |root| draw_stalls(root, &bars))
}

/// The same as [`stalls_svg`], as PNG bytes.
pub fn stalls_png(records: &[RunRecord]) -> Result<Vec<u8>> {
    let bars = stall_bars(records, stalls_scheduler(records));
    png(stalls_size(bars.1.len()), |root| draw_stalls(root, &bars))
}

/// Wide enough for 40-pixel bars (their value labels fit above them), and at least 1100.
fn speedup_size(t: &SpeedupTable) -> (u32, u32) {
    let bars = (t.classes.len() * t.compared().count()) as u32;
    let width = LEGEND_WIDTH as u32 + 100 + 50 * bars;
    (width.max(1100), SPEEDUP_HEIGHT)
}

/// Wide enough for 36 pixels per kernel, and at least 1200 pixels.
fn stalls_size(kernels: usize) -> (u32, u32) {
    let width = LEGEND_WIDTH as u32 + 130 + 36 * kernels as u32;
    (width.max(1200), STALLS_HEIGHT)
}

/// The smallest text size used (see the module note: 12.1 px in an SVG).
pub const MIN_FONT: u32 = 15;

fn font(size: u32) -> TextStyle<'static> {
    (FONT, size.max(MIN_FONT)).into_font().color(&BLACK)
}

/// Our value and the paper's of one bar.
struct Bar {
    class: usize,
    slot: usize,
    value: f64,
    paper: Option<f64>,
}

/// Bars of one scheduler, one per class it has a value for.
fn scheduler_bars(t: &SpeedupTable, scheduler: &str, slot: usize) -> Vec<Bar> {
    t.classes
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let cell = row.cell(scheduler)?;
            cell.speedup.is_finite().then_some(Bar {
                class: i,
                slot,
                value: cell.speedup,
                paper: cell.paper_speedup,
            })
        })
        .collect()
}

/// Horizontal extent of bar `slot` of `slots` in group `class`.
fn bar_span(class: usize, slot: usize, slots: usize) -> (f64, f64) {
    let width = 0.8 / slots.max(1) as f64;
    let left = class as f64 + 0.1 + slot as f64 * width;
    (left, left + width)
}

fn y_top(t: &SpeedupTable) -> f64 {
    let max = t
        .classes
        .iter()
        .flat_map(|r| r.cells.iter())
        .flat_map(|c| [Some(c.speedup), c.paper_speedup])
        .flatten()
        .filter(|v| v.is_finite())
        .fold(1.0f64, f64::max);
    (max * 1.15).max(1.3)
}

fn draw_speedup<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, t: &SpeedupTable) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (plot, legend_area) = root.split_horizontally(root.dim_in_pixel().0 as i32 - LEGEND_WIDTH);
    let compared: Vec<&str> = t.compared().collect();
    let groups = t.classes.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!("Speedup over {} (geometric mean per class)", t.baseline),
            font(22),
        )
        .margin(14)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..groups, 0.0..y_top(t))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .max_light_lines(0)
        .y_desc(format!("speedup over {}", t.baseline))
        .y_label_formatter(&|v| format!("{v:.1}"))
        .label_style(font(15))
        .axis_desc_style(font(16))
        .draw()?;
    let mut legend = Vec::new();
    for (slot, s) in compared.iter().enumerate() {
        let bars = scheduler_bars(t, s, slot);
        let color = scheduler_color(s);
        chart.draw_series(bars.iter().map(|b| {
            let (l, r) = bar_span(b.class, b.slot, compared.len());
            Rectangle::new([(l, 0.0), (r, b.value)], color.filled())
        }))?;
        chart.draw_series(bars.iter().map(|b| {
            let (l, r) = bar_span(b.class, b.slot, compared.len());
            let style = font(15).pos(Pos::new(HPos::Center, VPos::Bottom));
            Text::new(format!("{:.2}", b.value), ((l + r) / 2.0, b.value), style)
        }))?;
        legend.push((s.to_string(), Mark::Bar(color)));
    }
    if draw_paper_marks(&mut chart, t, &compared)? {
        legend.push(("paper (HPCA 2015)".to_string(), Mark::Dash));
    }
    chart.draw_series(LineSeries::new(
        [(0.0, 1.0), (groups, 1.0)],
        BLACK.stroke_width(1),
    ))?;
    for (i, row) in t.classes.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let style = font(16).pos(Pos::new(HPos::Center, VPos::Top));
        plot.draw(&Text::new(
            format!("{} ({})", row.label, row.kernels),
            (x, y + 8),
            style,
        ))?;
    }
    draw_legend(&legend_area, &legend)
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Width of the legend strip at the right of every plot (pixels).
const LEGEND_WIDTH: i32 = 190;

/// A legend entry's symbol.
enum Mark {
    Bar(RGBColor),
    /// The paper's figure: a thick black dash across the bar.
    Dash,
}

/// The legend, in its own strip so it never hides a bar.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(String, Mark)]) -> Result<()>
where
    DB::ErrorType: 'static,
{
    for (i, (label, mark)) in entries.iter().enumerate() {
        let y = 64 + 26 * i as i32;
        match mark {
            Mark::Bar(c) => area.draw(&Rectangle::new([(8, y - 7), (26, y + 7)], c.filled()))?,
            Mark::Dash => area.draw(&Rectangle::new([(6, y - 2), (28, y + 1)], BLACK.filled()))?,
        }
        let style = font(15).pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(label.clone(), (36, y), style))?;
    }
    Ok(())
}

/// A thick black dash at the paper's figure across each bar that has one; false if none.
fn draw_paper_marks<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    t: &SpeedupTable,
    compared: &[&str],
) -> Result<bool>
where
    DB::ErrorType: 'static,
{
    let marks: Vec<(f64, f64, f64)> = compared
        .iter()
        .enumerate()
        .flat_map(|(slot, s)| scheduler_bars(t, s, slot))
        .filter_map(|b| {
            let (l, r) = bar_span(b.class, b.slot, compared.len());
            b.paper.map(|p| (l, r, p))
        })
        .collect();
    // Half the dash thickness, 1.5 pixels, in data units.
    let y = chart.y_range();
    let half = (y.end - y.start) / chart.plotting_area().dim_in_pixel().1.max(1) as f64 * 1.5;
    let pad = 0.01;
    chart.draw_series(
        marks
            .iter()
            .map(|&(l, r, p)| Rectangle::new([(l - pad, p - half), (r + pad, p + half)], BLACK.filled())),
    )?;
    Ok(!marks.is_empty())
}

/// Label, colour, value and bar slot of one series of the stall plot.
type StallSeries = (&'static str, RGBColor, fn(&StallBar) -> f64, usize);

/// One kernel of the stall plot.
struct StallBar {
    kernel: String,
    memory: bool,
    ipc_fraction: f64,
    lsu_stall: f64,
}

fn stalls_scheduler(records: &[RunRecord]) -> &str {
    if records.iter().any(|r| r.scheduler == "lrr") {
        "lrr"
    } else {
        records.first().map_or("lrr", |r| r.scheduler.as_str())
    }
}

/// The baseline runs, compute kernels first, each group by falling fraction of peak IPC.
fn stall_bars(records: &[RunRecord], scheduler: &str) -> (String, Vec<StallBar>) {
    let mut bars: Vec<StallBar> = records
        .iter()
        .filter(|r| r.scheduler == scheduler)
        .map(|r| StallBar {
            kernel: r.kernel.clone(),
            memory: r.class != KernelClass::Compute,
            ipc_fraction: if r.stats.peak_ipc > 0.0 {
                r.stats.ipc / r.stats.peak_ipc
            } else {
                0.0
            },
            lsu_stall: r.stats.lsu_stall_fraction,
        })
        .collect();
    bars.sort_by(|a, b| {
        a.memory
            .cmp(&b.memory)
            .then(b.ipc_fraction.total_cmp(&a.ipc_fraction))
    });
    (scheduler.to_string(), bars)
}

fn draw_stalls<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &(String, Vec<StallBar>),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (scheduler, bars) = data;
    root.fill(&WHITE)?;
    let (plot, legend_area) = root.split_horizontally(root.dim_in_pixel().0 as i32 - LEGEND_WIDTH);
    let n = bars.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!("{scheduler}: fraction of peak IPC and of cycles the LSU is stalled"),
            font(22),
        )
        .margin(14)
        .x_label_area_size(96)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..n, 0.0..1.1)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .max_light_lines(0)
        .y_desc("fraction")
        .y_label_formatter(&|v| format!("{v:.1}"))
        .label_style(font(15))
        .axis_desc_style(font(16))
        .draw()?;
    let series: [StallSeries; 2] = [
        (
            "fraction of peak IPC",
            RGBColor(31, 119, 180),
            |b| b.ipc_fraction,
            0,
        ),
        ("LSU stall fraction", RGBColor(214, 39, 40), |b| b.lsu_stall, 1),
    ];
    let mut legend = Vec::new();
    for (label, color, value, slot) in series {
        chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
            let (l, r) = bar_span(i, slot, 2);
            Rectangle::new([(l, 0.0), (r, value(b))], color.filled())
        }))?;
        legend.push((label.to_string(), Mark::Bar(color)));
    }
    draw_group_split(&mut chart, bars)?;
    for (i, b) in bars.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let style = font(15)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center));
        plot.draw(&Text::new(b.kernel.clone(), (x, y + 6), style))?;
    }
    draw_legend(&legend_area, &legend)
}

/// A divider between compute and memory-intensive kernels, with group names.
fn draw_group_split<DB: DrawingBackend>(chart: &mut Chart<DB>, bars: &[StallBar]) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let split = bars.iter().position(|b| b.memory).unwrap_or(bars.len());
    let groups = [
        (ClassGroup::Compute.label(), 0, split),
        ("memory intensive", split, bars.len()),
    ];
    for (label, from, to) in groups.into_iter().filter(|g| g.2 > g.1) {
        let style = font(15).pos(Pos::new(HPos::Center, VPos::Top));
        chart.draw_series([Text::new(label, ((from + to) as f64 / 2.0, 1.09), style)])?;
    }
    if split > 0 && split < bars.len() {
        let x = split as f64;
        chart.draw_series(LineSeries::new(
            [(x, 0.0), (x, 1.1)],
            BLACK.mix(0.5).stroke_width(2),
        ))?;
    }
    Ok(())
}

/// Every `font-size` of an SVG's texts (in px), and how many `<text` elements it has.
pub fn svg_font_sizes(svg: &str) -> (Vec<f64>, usize) {
    let sizes = svg
        .split("font-size=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next()?.trim_end_matches("px").parse().ok())
        .collect();
    (sizes, svg.matches("<text").count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::speedup_table;
    use crate::report::compare::tests::sample;

    fn with_ipc(mut recs: Vec<RunRecord>) -> Vec<RunRecord> {
        for (i, r) in recs.iter_mut().enumerate() {
            r.stats.peak_ipc = 30.0;
            r.stats.ipc = if r.class == KernelClass::Compute {
                27.0
            } else {
                3.0 + i as f64
            };
            r.stats.lsu_stall_fraction = if r.class == KernelClass::Compute {
                0.02
            } else {
                0.6
            };
        }
        recs
    }

    #[test]
    fn speedup_plots_render_svg_and_png() {
        let t = speedup_table(&sample(), "lrr");
        let text = speedup_svg(&t).unwrap();
        assert!(text.contains("<svg") && text.contains("mascar") && text.contains("paper (HPCA 2015)"));
        assert!(text.contains("bandwidth intensive (2)"));
        let bytes = speedup_png(&t).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }

    #[test]
    fn stalls_plot_sorts_compute_first() {
        let recs = with_ipc(sample());
        let (sched, bars) = stall_bars(&recs, stalls_scheduler(&recs));
        assert_eq!(sched, "lrr");
        let names: Vec<&str> = bars.iter().map(|b| b.kernel.as_str()).collect();
        assert_eq!(names[0], "c1");
        assert!(bars[1..].iter().all(|b| b.memory));
        assert!(bars[1].ipc_fraction >= bars[2].ipc_fraction);
        assert!(stalls_svg(&recs).unwrap().contains("LSU stall fraction"));
        assert_eq!(&stalls_png(&recs).unwrap()[1..4], b"PNG");
    }

    #[test]
    fn every_svg_text_is_at_least_12_px() {
        let recs = with_ipc(sample());
        let t = speedup_table(&recs, "lrr");
        for (name, svg) in [
            ("speedup", speedup_svg(&t).unwrap()),
            ("stalls", stalls_svg(&recs).unwrap()),
        ] {
            let (sizes, texts) = svg_font_sizes(&svg);
            assert!(texts > 5, "{name}: only {texts} texts");
            assert_eq!(sizes.len(), texts, "{name}: a text without a font-size");
            let small: Vec<f64> = sizes.into_iter().filter(|&px| px < 12.0).collect();
            assert!(small.is_empty(), "{name}: texts below 12 px: {small:?}");
        }
    }
}
