//! The Markdown section of a run, and its place in docs/benchmarks.md: between two markers,
//! replaced on every run, with everything outside them (the criterion table, the findings)
//! left as it is.

use std::fmt::Write;
use std::time::Duration;

use crate::apply::ApplyCase;
use crate::fallback::FallbackCase;
use crate::machine::Machine;
use crate::noticing::NoticeCase;
use crate::plan_scale::{GET_PARALLELISM, GetBaseline, PageCapCase, PlanCase};
use crate::startup::Startup;
use crate::stats::{Summary, ratio, seconds, seconds_summary};

/// The line that opens the generated section.
pub const BEGIN: &str = "<!-- clusterform-bench: begin (generated; rerun instead of editing) -->";
/// The line that closes it.
pub const END: &str = "<!-- clusterform-bench: end -->";

/// Plan time against the floor.
pub const PLAN_FLOOR_TARGET: f64 = 1.25;
/// How much faster than Get-per-cluster a plan must be, at [`GET_TARGET_SIZE`] clusters.
pub const GET_SPEEDUP_TARGET: f64 = 10.0;
/// The fleet size the Get-per-cluster target is set for.
pub const GET_TARGET_SIZE: usize = 1_000;
/// Noticing with `:wait`: one round trip (the latency) plus this.
pub const WAIT_SLACK: Duration = Duration::from_millis(50);
/// Apply time against the floor.
pub const APPLY_FLOOR_TARGET: f64 = 1.2;
/// A create that falls back, against its floor.
pub const FALLBACK_FLOOR_TARGET: f64 = 1.1;
/// CPU seconds and peak RSS in MB allowed to `plan` of this many clusters.
pub const COST_TARGETS: [(usize, f64, f64); 2] = [(1_000, 0.3, 60.0), (10_000, 2.0, 300.0)];

/// Everything one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// Plan at scale (both layouts).
    pub plan: Vec<PlanCase>,
    /// One plan-at-scale case again at other List page caps.
    pub page_caps: Vec<PageCapCase>,
    /// Noticing that an operation finished.
    pub noticing: Vec<NoticeCase>,
    /// Apply of updates and creates.
    pub apply: Vec<ApplyCase>,
    /// A create whose primary machine type stocks out.
    pub fallback: FallbackCase,
    /// `clusterform --version`.
    pub startup: Startup,
}

/// How the run was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Injected latency per request.
    pub latency: Duration,
    /// Samples per figure.
    pub samples: usize,
    /// The command that reproduces the run.
    pub command: String,
    /// The day of the run (`YYYY-MM-DD`).
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// The most clusters one List page holds.
    pub page_cap: usize,
}

/// Targets that were missed, in the order the tables show them.
#[derive(Debug, Default)]
struct Missed(Vec<String>);

impl Missed {
    /// The verdict cell for a target, remembering a miss.
    fn verdict(&mut self, met: bool, what: impl FnOnce() -> String) -> &'static str {
        if met {
            "met"
        } else {
            self.0.push(what());
            "**missed**"
        }
    }
}

/// The whole generated section, markers included.
pub fn render(results: &Results, settings: &Settings) -> String {
    let mut missed = Missed::default();
    let mut out = String::new();
    out.push_str(BEGIN);
    out.push('\n');
    out.push_str(&header(settings));
    out.push_str(&plan_table(&results.plan, &mut missed));
    out.push_str(&page_cap_table(&results.page_caps, settings));
    out.push_str(&noticing_table(
        &results.noticing,
        settings.latency,
        &mut missed,
    ));
    out.push_str(&apply_table(&results.apply, &mut missed));
    out.push_str(&fallback_table(&results.fallback, &mut missed));
    out.push_str(&cost_table(&results.plan, &results.startup, &mut missed));
    out.push_str(&baselines(settings));
    out.push_str("\n### Targets missed in this run\n\n");
    if missed.0.is_empty() {
        out.push_str("None.\n");
    }
    for line in &missed.0 {
        let _ = writeln!(out, "- {line}");
    }
    out.push_str(
        "\nWhat was found by profiling the misses is written below the generated section.\n",
    );
    out.push_str(END);
    out.push('\n');
    out
}

/// `existing` with the generated section replaced by `section`, or `section` appended when
/// there is none yet.
pub fn splice(existing: &str, section: &str) -> String {
    if let (Some(begin), Some(end)) = (existing.find(BEGIN), existing.find(END))
        && begin < end
    {
        let after = &existing[end + END.len()..];
        let after = after.strip_prefix('\n').unwrap_or(after);
        return format!("{}{section}{after}", &existing[..begin]);
    }
    let separator = match existing {
        "" => "",
        text if text.ends_with("\n\n") => "",
        text if text.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    format!("{existing}{separator}{section}")
}

fn header(settings: &Settings) -> String {
    let Machine {
        cores,
        memory,
        os,
        rustc,
    } = &settings.machine;
    format!(
        "\n## Side by side: the tool against its baselines\n\n\
         Measured on {date} by one command, from the repository's root:\n\n\
         ```sh\n{command}\n```\n\n\
         Machine: {cores} cores, {memory} RAM, {os}; {rustc}. The `clusterform` binary, built \
         by the command, runs as a child process exactly as a user runs it, against the API \
         emulator served by the benchmark on 127.0.0.1, which waits {latency} before handling \
         every request; a List page holds at most {page_cap} clusters. Every figure is the \
         median of {samples} samples, with the smallest and the largest in parentheses; \
         ratios are of medians.\n",
        date = settings.date,
        command = settings.command,
        latency = seconds(settings.latency.as_secs_f64()),
        page_cap = settings.page_cap,
        samples = settings.samples,
    )
}

fn plan_table(cases: &[PlanCase], missed: &mut Missed) -> String {
    let mut out = format!(
        "\n### Plan at scale\n\n\
         A fleet that needs no changes: every sample of `clusterform plan --detailed-exitcode` \
         exits 0. Whole process, from start to exit.\n\n\
         | clusters | regions | `clusterform plan` | floor | ours ÷ floor (≤ {PLAN_FLOOR_TARGET}×) | \
         Get per cluster, {GET_PARALLELISM} at a time | Get ÷ ours (≥ {GET_SPEEDUP_TARGET}× at {target_size}) |\n\
         |---:|---:|---|---|---|---|---|\n",
        target_size = thousands(GET_TARGET_SIZE),
    );
    for case in cases {
        let vs_floor = case.ours.median / case.floor;
        let floor_verdict = missed.verdict(vs_floor <= PLAN_FLOOR_TARGET, || {
            format!(
                "plan of {} clusters in {} region(s): {} the floor (target ≤ {PLAN_FLOOR_TARGET}×)",
                case.size,
                case.regions,
                ratio(vs_floor)
            )
        });
        let gets = case.get_per_cluster.summary();
        let speedup = gets.median / case.ours.median;
        let speedup_cell = if case.size == GET_TARGET_SIZE {
            let verdict = missed.verdict(speedup >= GET_SPEEDUP_TARGET, || {
                format!(
                    "plan of {} clusters in {} region(s): {} faster than Get per cluster (target ≥ {GET_SPEEDUP_TARGET}×)",
                    case.size,
                    case.regions,
                    ratio(speedup)
                )
            });
            format!("{} ({verdict})", ratio(speedup))
        } else {
            ratio(speedup)
        };
        let gets_cell = match case.get_per_cluster {
            GetBaseline::Measured(summary) => seconds_summary(summary),
            GetBaseline::Computed { from_size, summary } => format!(
                "{} (computed: {}× the {from_size}-cluster figure, not run)",
                seconds_summary(summary),
                case.size / from_size.max(1)
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} ({floor_verdict}) | {gets_cell} | {speedup_cell} |",
            thousands(case.size),
            case.regions,
            seconds_summary(case.ours),
            seconds(case.floor),
            ratio(vs_floor),
        );
    }
    out
}

/// Not a target: how the page cap, which the service does not document, bounds the speed-up
/// over a Get per cluster.
fn page_cap_table(cases: &[PageCapCase], settings: &Settings) -> String {
    let Some(first) = cases.first() else {
        return String::new();
    };
    let default_cap = settings.page_cap;
    let default_floor = pages(first.size, default_cap) * settings.latency.as_secs_f64();
    let mut out = format!(
        "\n### The List page cap\n\n\
         The service does not document how many clusters one List page may hold; the emulator \
         caps pages at {default_cap}, a guess, and clusterform asks for {asked}. A refresh \
         reads its pages one after another, so the cap bounds the speed-up over a Get per \
         cluster: at {default_cap} a page, even a tool at exactly the floor would be at most \
         {bound} faster for {size} clusters. The same one-region plan of {size} clusters \
         against an emulator whose pages hold as many clusters as clusterform asks for (a \
         larger cap changes nothing a refresh reads; the Get-per-cluster figure is the one \
         above, which reads no pages). Not a target: this row shows what the cap does.\n\n\
         | page cap | pages | `clusterform plan` | floor | ours ÷ floor | Get ÷ ours |\n\
         |---:|---:|---|---|---|---|\n",
        asked = thousands(clusterform_executor::LIST_PAGE_SIZE as usize),
        bound = times(first.get_per_cluster.median, default_floor),
        size = thousands(first.size),
    );
    for case in cases {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            thousands(case.page_cap),
            pages(case.size, case.page_cap),
            seconds_summary(case.ours),
            seconds(case.floor),
            times(case.ours.median, case.floor),
            times(case.get_per_cluster.median, case.ours.median),
        );
    }
    out
}

/// List pages of `size` clusters at `page_cap` a page (at least one).
fn pages(size: usize, page_cap: usize) -> f64 {
    // Page counts are small whole numbers, exact in an f64.
    #[allow(clippy::cast_precision_loss)]
    let pages = size.div_ceil(page_cap.max(1)).max(1) as f64;
    pages
}

fn noticing_table(cases: &[NoticeCase], latency: Duration, missed: &mut Missed) -> String {
    let target = latency + WAIT_SLACK;
    let mut out = format!(
        "\n### Noticing that an operation finished\n\n\
         The delay from the emulator finishing an operation (its `updateTime` once done) to the \
         client holding the done operation. The samples of one duration run at once.\n\n\
         | operation | `:wait` (≤ {}) | our polling fallback | 2 s → 10 s polling | fallback ÷ `:wait` | 2 s → 10 s ÷ `:wait` |\n\
         |---:|---|---|---|---|---|\n",
        seconds(target.as_secs_f64())
    );
    for case in cases {
        let operation = format!("{} s", case.operation.as_secs_f64());
        let verdict = missed.verdict(case.wait.median <= target.as_secs_f64(), || {
            format!(
                "noticing a {operation} operation with `:wait`: {} (target ≤ {})",
                seconds(case.wait.median),
                seconds(target.as_secs_f64())
            )
        });
        let _ = writeln!(
            out,
            "| {operation} | {} ({verdict}) | {} | {} | {} | {} |",
            seconds_summary(case.wait),
            seconds_summary(case.fallback),
            seconds_summary(case.terraform),
            times(case.fallback.median, case.wait.median),
            times(case.terraform.median, case.wait.median),
        );
    }
    out
}

fn apply_table(cases: &[ApplyCase], missed: &mut Missed) -> String {
    let mut out = format!(
        "\n### Apply\n\n\
         `clusterform apply --auto-approve` in one region; a fresh emulator and configuration \
         directory for every sample.\n\n\
         | what | operations | parallelism | `clusterform apply` | floor | ours ÷ floor (≤ {APPLY_FLOOR_TARGET}×) |\n\
         |---|---:|---:|---|---|---|\n"
    );
    for case in cases {
        let what = format!("{} {}", case.clusters, case.change.plural());
        let vs_floor = case.ours.median / case.floor;
        let verdict = missed.verdict(vs_floor <= APPLY_FLOOR_TARGET, || {
            format!(
                "apply of {what}: {} the floor (target ≤ {APPLY_FLOOR_TARGET}×)",
                ratio(vs_floor)
            )
        });
        let _ = writeln!(
            out,
            "| {what} | {} s | {} | {} | {} | {} ({verdict}) |",
            case.operation.as_secs_f64(),
            case.parallelism,
            seconds_summary(case.ours),
            seconds(case.floor),
            ratio(vs_floor),
        );
    }
    out
}

fn fallback_table(case: &FallbackCase, missed: &mut Missed) -> String {
    let vs_floor = case.ours.median / case.floor;
    let verdict = missed.verdict(vs_floor <= FALLBACK_FLOOR_TARGET, || {
        format!(
            "apply of a create that falls back: {} the floor (target ≤ {FALLBACK_FLOOR_TARGET}×)",
            ratio(vs_floor)
        )
    });
    format!(
        "\n### Capacity fallback\n\n\
         `clusterform apply --auto-approve` of one new cluster whose GPU pool asks for `{primary}` \
         machines, which the emulator has none of (its create is accepted and its operation \
         fails for capacity), with one `fallback` to `{fallback}`; a fresh emulator and \
         configuration directory for every sample. Every sample ends with the cluster running \
         on the fallback.\n\n\
         | operations | `clusterform apply` | floor | ours ÷ floor (≤ {FALLBACK_FLOOR_TARGET}×) |\n\
         |---:|---|---|---|\n\
         | {} s | {} | {} | {} ({verdict}) |\n",
        case.operation.as_secs_f64(),
        seconds_summary(case.ours),
        seconds(case.floor),
        ratio(vs_floor),
        primary = crate::fallback::PRIMARY,
        fallback = crate::fallback::FALLBACK,
    )
}

fn cost_table(cases: &[PlanCase], startup: &Startup, missed: &mut Missed) -> String {
    let mut out = String::from(
        "\n### Cost of the tool\n\n\
         CPU time (user + system) and peak RSS of the `clusterform` process, from \
         `getrusage(RUSAGE_CHILDREN)` in a process whose only child is that run; the plan rows \
         are the plan-at-scale runs above.\n\n\
         | command | CPU | peak RSS | target |\n\
         |---|---|---|---|\n",
    );
    let _ = writeln!(
        out,
        "| `clusterform --version` (wall {}) | {} | {} | — |",
        seconds_summary(startup.wall),
        seconds_summary(startup.cpu),
        megabytes(startup.rss_kib),
    );
    for case in cases {
        let target = COST_TARGETS
            .iter()
            .find(|(size, _, _)| *size == case.size)
            .map_or_else(
                || "—".to_owned(),
                |&(_, cpu, rss_mb)| {
                    let measured_mb = mb_of_kib(case.rss_kib.median);
                    let met = case.cpu.median <= cpu && measured_mb <= rss_mb;
                    let verdict = missed.verdict(met, || {
                        format!(
                            "cost of plan of {} clusters in {} region(s): {} CPU, {measured_mb:.0} MB (target ≤ {} CPU, ≤ {rss_mb:.0} MB)",
                            case.size,
                            case.regions,
                            seconds(case.cpu.median),
                            seconds(cpu)
                        )
                    });
                    format!("≤ {}, ≤ {rss_mb:.0} MB ({verdict})", seconds(cpu))
                },
            );
        let _ = writeln!(
            out,
            "| `plan`, {} clusters, {} region(s) | {} | {} | {target} |",
            thousands(case.size),
            case.regions,
            seconds_summary(case.cpu),
            megabytes(case.rss_kib),
        );
    }
    out
}

fn baselines(settings: &Settings) -> String {
    let latency = seconds(settings.latency.as_secs_f64());
    let page_cap = settings.page_cap;
    format!(
        "\n### What each baseline stands for\n\n\
         - **floor (plan)**: the least time any refresh by List can take: every region's pages \
         one after another (⌈clusters ÷ {page_cap}⌉, at least one), {latency} each, the regions \
         in parallel. Reading configuration and planning are not in it.\n\
         - **Get per cluster, {GET_PARALLELISM} at a time**: how the Terraform provider refreshes — \
         one read per resource in its state, at Terraform's default `-parallelism=10`; here the \
         executor's `ApiClient::get_cluster` for every declared cluster, inside the benchmark \
         (so without a process start, which favours the baseline). Above \
         {measured_up_to} clusters it is computed from the largest measured size, since at a fixed \
         parallelism it grows linearly (10,000 Gets take about 50 s a sample).\n\
         - **our polling fallback**: the executor's waiter when the server answers `:wait` with \
         `501 UNIMPLEMENTED` (GET every 1 s, doubling up to 10 s).\n\
         - **2 s → 10 s polling**: the Terraform provider's operation polling, implemented in the \
         benchmark: a GET 2 s after the create answered, then pauses doubling up to 10 s.\n\
         - **floor (apply)**: the refresh's List pages, then ⌈operations ÷ parallelism⌉ waves of \
         one request round trip ({latency}) plus the operation's own time. Noticing the end \
         costs nothing in it, because a `:wait` sent during the operation answers when it \
         finishes.\n\
         - **floor (fallback)**: the refresh's List page, then {operations} requests one after \
         another, each one round trip ({latency}) plus its operation: the create that fails, \
         the delete of the cluster it left behind, the create of the fallback.\n",
        operations = crate::fallback::OPERATIONS,
        measured_up_to = thousands(crate::plan_scale::GET_MEASURED_UP_TO),
    )
}

fn times(value: f64, base: f64) -> String {
    if base <= 0.0 {
        return "—".to_owned();
    }
    ratio(value / base)
}

fn mb_of_kib(kib: f64) -> f64 {
    kib * 1024.0 / 1e6
}

fn megabytes(kib: Summary) -> String {
    let mb = kib.scaled(1024.0 / 1e6);
    if mb.min == mb.max {
        return format!("**{:.1} MB**", mb.median);
    }
    format!("**{:.1} MB** ({:.1} – {:.1})", mb.median, mb.min, mb.max)
}

/// `10000` as `10,000`.
fn thousands(value: usize) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_only_the_generated_section() {
        let existing = format!("# Benchmarks\n\ntable\n\n{BEGIN}\nold\n{END}\n\n## Findings\n");
        let spliced = splice(&existing, &format!("{BEGIN}\nnew\n{END}\n"));
        assert_eq!(
            spliced,
            format!("# Benchmarks\n\ntable\n\n{BEGIN}\nnew\n{END}\n\n## Findings\n")
        );
    }

    #[test]
    fn splice_appends_when_there_is_no_section_yet() {
        let section = format!("{BEGIN}\nnew\n{END}\n");
        assert_eq!(
            splice("# Benchmarks\n", &section),
            format!("# Benchmarks\n\n{section}")
        );
        assert_eq!(splice("", &section), section);
    }

    #[test]
    fn a_miss_is_remembered_and_marked() {
        let mut missed = Missed::default();
        assert_eq!(missed.verdict(true, || "no".to_owned()), "met");
        assert_eq!(missed.verdict(false, || "plan".to_owned()), "**missed**");
        assert_eq!(missed.0, ["plan"]);
    }

    fn settings() -> Settings {
        Settings {
            latency: Duration::from_millis(50),
            samples: 5,
            command: "cargo run".to_owned(),
            date: "2026-12-01".to_owned(),
            machine: Machine {
                cores: "2".to_owned(),
                memory: "24 GiB".to_owned(),
                os: "Linux".to_owned(),
                rustc: "rustc".to_owned(),
            },
            page_cap: 50,
        }
    }

    #[test]
    fn the_page_cap_rows_show_the_bound_at_the_default_cap_and_each_cap_tried() {
        let case = |page_cap, ours, floor| PageCapCase {
            page_cap,
            size: 1_000,
            ours: Summary::exact(ours),
            floor,
            get_per_cluster: Summary::exact(5.2),
        };
        let table = page_cap_table(&[case(100, 0.6, 0.5), case(500, 0.13, 0.1)], &settings());
        // 1,000 clusters at 50 a page: 20 pages of 50 ms, so at most 5.2 s ÷ 1 s.
        assert!(table.contains("would be at most 5.20× faster"), "{table}");
        assert!(
            table.contains("| 100 | 10 | **600 ms** | 500 ms | 1.20× | 8.67× |"),
            "{table}"
        );
        assert!(
            table.contains("| 500 | 2 | **130 ms** | 100 ms | 1.30× | 40× |"),
            "{table}"
        );
    }

    #[test]
    fn no_page_cap_rows_no_section() {
        assert_eq!(page_cap_table(&[], &settings()), "");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(10), "10");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(10_000), "10,000");
    }
}
