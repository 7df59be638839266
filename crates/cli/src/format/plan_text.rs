//! The plan as text, in Terraform's look: one block per changing cluster with `+ ~ - -/+`,
//! `old -> new`, nested blocks for node pools and partitions, unchanged attributes hidden behind
//! a count, `# forces replacement` on immutable changes, multi-line strings as `<<-EOT`
//! heredocs diffed line by line, then the update mask, mode, impact and warnings of the
//! cluster, and a closing summary line. A plan spanning several (project, region) pairs names
//! each cluster with its location.
//!
//! Colour is applied only when the caller asks for it: the CLI knows whether the output is a
//! terminal and whether `NO_COLOR` is set; this module never looks.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use clusterform_model::fields::{self, FieldKind, ImpactClass, MaskSource};
use clusterform_model::paths::{self, Segment, Selector};
use clusterform_model::pricing::PriceList;
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{
    Action, Attempt, Cluster, JobsByCluster, RunningJob, RunningJobs, UpdateMode,
};
use clusterform_planner::{
    ChangeReason, ClusterChange, Disruption, FieldChange, Plan, PoolAlternative, PoolDisruption,
    PoolHarm, RunningAlternative,
};
use console::Style;
use serde_json::{Map, Value};

use crate::format::actions::symbol;
use crate::format::heredoc::{self, Line};
use crate::format::names::ClusterNames;
use crate::format::notes;
use crate::format::{costs, gpus};

/// Jobs named one by one under a disruptive change; the rest are counted.
const MAX_JOBS_LISTED: usize = 10;

/// How a value from a sensitive variable is shown.
const SENSITIVE: &str = "(sensitive)";

/// Renders a plan as text, each disruptive change with the jobs `jobs` saw on its cluster;
/// `color` adds ANSI colours.
pub fn render_text(plan: &Plan, jobs: &JobsByCluster, color: bool) -> String {
    render_priced_text(plan, jobs, None, color)
}

/// [`render_text`], with `prices` each change's cost beside its GPUs and the plan's after its
/// GPU total.
pub fn render_priced_text(
    plan: &Plan,
    jobs: &JobsByCluster,
    prices: Option<&PriceList>,
    color: bool,
) -> String {
    let paint = Paint { color };
    let names = ClusterNames::for_clusters(plan.changes.iter().map(|c| &c.address));
    if !plan.has_changes() {
        let mut out = if plan.flags.destroy {
            "No clusters to destroy.\n".to_owned()
        } else {
            format!(
                "{} Your clusters match the configuration.\n",
                paint.style(Style::new().green().bold(), "No changes.")
            )
        };
        for change in &plan.changes {
            let label = paint.style(Style::new().yellow().bold(), "Note:");
            let name = names.name(&change.address);
            for warning in &change.warnings {
                let _ = writeln!(out, "{label} {name}: {}", notes::plan_warning(warning));
            }
            for running in &change.capacity.running {
                let _ = writeln!(out, "{label} {name}: {}", running_line(running));
            }
            if let Some(line) = in_error_line(change) {
                let _ = writeln!(out, "{label} {name}: {line}");
            }
        }
        return out;
    }
    let mut out = String::from("clusterform will perform the following actions:\n\n");
    for change in plan.changes.iter().filter(|c| c.action != Action::NoOp) {
        ClusterText {
            out: &mut out,
            paint,
            name: names.name(&change.address),
            prices,
        }
        .render(change, jobs.get(&change.address));
        out.push('\n');
    }
    // Clusters left as they are, but in ERROR: said once each, before the counts.
    let mut noted = false;
    for change in plan.changes.iter().filter(|c| c.action == Action::NoOp) {
        if let Some(line) = in_error_line(change) {
            let label = paint.style(Style::new().yellow().bold(), "Note:");
            let _ = writeln!(out, "{label} {}: {line}", names.name(&change.address));
            noted = true;
        }
    }
    if noted {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} {}",
        paint.style(Style::new().bold(), "Plan:"),
        action_counts(plan)
    );
    if let Some(line) = gpus::total_line(&plan.gpu_change()) {
        let _ = writeln!(out, "{line}");
    }
    let cost =
        prices.and_then(|prices| costs::total_line(&plan.cost_change(prices), &prices.currency));
    if let Some(line) = cost {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `1 to add, 0 to change, 0 to replace, 0 to destroy.` (and `, 1 to release` when there is
/// one), what the `Plan:` line counts.
pub fn action_counts(plan: &Plan) -> String {
    let summary = plan.summary();
    let release = match summary.release {
        0 => String::new(),
        n => format!(", {n} to release"),
    };
    format!(
        "{} to add, {} to change, {} to replace, {} to destroy{release}.",
        summary.add, summary.change, summary.replace, summary.destroy
    )
}

/// What a replacement gives up: the live cluster goes before the new one is asked for, so its
/// machines (and the reservations its pools consume) are free for others in between.
fn replacement_lines(change: &ClusterChange) -> Vec<String> {
    let id = change.address.id();
    let attempts = if change.capacity.fallbacks.is_empty() {
        "the create finds no machines"
    } else {
        "no attempt finds machines"
    };
    let mut lines = vec![format!(
        "the live cluster is deleted first: its machines are not held for the new one, so if \
         {attempts}, {id} is gone"
    )];
    for (pool, reservations) in reserved_pools(change) {
        lines.push(format!(
            "node pool \"{pool}\" consumes {reservations}: the delete frees it and the create \
             consumes it again (another consumer may take it in between)"
        ));
    }
    lines
}

/// The pools of a change's create that consume a reservation, each with what it names.
fn reserved_pools(change: &ClusterChange) -> Vec<(String, String)> {
    let Some(ClusterRequest::Create { body, .. }) = change
        .requests
        .iter()
        .find(|r| matches!(r, ClusterRequest::Create { .. }))
    else {
        return Vec::new();
    };
    let Ok(cluster) = serde_json::from_value::<Cluster>(body.clone()) else {
        return Vec::new();
    };
    cluster
        .node_pools
        .unwrap_or_default()
        .into_iter()
        .filter_map(|pool| {
            let affinity = pool.machine_spec?.reservation_affinity?;
            let kind = affinity.reservation_affinity_type.as_deref()?;
            let named = affinity.values.unwrap_or_default();
            let reservations = match kind {
                "SPECIFIC_RESERVATION" if !named.is_empty() => {
                    format!("reservation {}", named.join(", "))
                }
                "SPECIFIC_RESERVATION" | "ANY_RESERVATION" => "a reservation".to_owned(),
                _ => return None,
            };
            Some((pool.id, reservations))
        })
        .collect()
}

/// The jobs a disruptive change would hit, a line each: how many are active by state, then
/// the jobs on what the change takes away (the whole cluster, or each pool that goes, with
/// how), those whose pools are not known, and a count of those on pools it leaves alone.
fn running_jobs_lines(disruption: &Disruption, jobs: &RunningJobs) -> Vec<String> {
    let jobs = match jobs {
        RunningJobs::Unknown { reason } => {
            return vec![format!("Slurm jobs active now: unknown ({reason})")];
        }
        RunningJobs::NotAsked { state } => {
            return vec![format!("Slurm is not asked while the cluster is {state}")];
        }
        RunningJobs::Known { jobs } if jobs.is_empty() => {
            return vec!["no Slurm jobs active now".to_owned()];
        }
        RunningJobs::Known { jobs } => jobs,
    };
    let mut lines = vec![format!(
        "{} Slurm {} active now: {}",
        jobs.len(),
        plural(jobs.len(), "job"),
        counts_by_state(jobs)
    )];
    let Disruption::Pools(pools) = disruption else {
        lines.push("all of them stop with the cluster:".to_owned());
        lines.extend(job_lines(jobs.iter()));
        return lines;
    };
    // Each job under the first pool of the change it runs on.
    let first_hit = |job: &RunningJob| pools.iter().position(|p| job.pools.contains(&p.pool));
    for (index, pool) in pools.iter().enumerate() {
        let hit: Vec<&RunningJob> = jobs
            .iter()
            .filter(|j| first_hit(j) == Some(index))
            .collect();
        let what = pool_harm_text(pool);
        if hit.is_empty() {
            lines.push(format!("none on pool {}, {what}", pool.pool));
        } else {
            lines.push(format!("on pool {}, {what}:", pool.pool));
            lines.extend(job_lines(hit.into_iter()));
        }
    }
    let unplaced: Vec<&RunningJob> = jobs.iter().filter(|j| j.pools.is_empty()).collect();
    if !unplaced.is_empty() {
        lines.push(
            "on pools not known (no partition that names a pool), so perhaps hit:".to_owned(),
        );
        lines.extend(job_lines(unplaced.into_iter()));
    }
    let spared = jobs
        .iter()
        .filter(|j| !j.pools.is_empty() && first_hit(j).is_none())
        .count();
    if spared > 0 {
        lines.push(format!(
            "{spared} {} on pools this change leaves alone",
            plural(spared, "job")
        ));
    }
    lines
}

/// `2 RUNNING, 1 PENDING`, states in the order they first appear.
fn counts_by_state(jobs: &[RunningJob]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for job in jobs {
        match counts.iter_mut().find(|(state, _)| *state == job.state) {
            Some((_, count)) => *count += 1,
            None => counts.push((&job.state, 1)),
        }
    }
    counts
        .iter()
        .map(|(state, count)| format!("{count} {state}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `whose nodes are recreated`, `which is deleted`, `which shrinks from 4 to 2 nodes (2 go;
/// the service picks which)`.
fn pool_harm_text(pool: &PoolDisruption) -> String {
    match pool.harm {
        PoolHarm::RecreatesNodes => "whose nodes are recreated".to_owned(),
        PoolHarm::Deleted => "which is deleted".to_owned(),
        PoolHarm::Shrinks { from, to } => {
            let going = from - to;
            let verb = if going == 1 { "goes" } else { "go" };
            format!(
                "which shrinks from {from} to {to} nodes ({going} {verb}; the service picks which)"
            )
        }
    }
}

/// `  17 train-llm (alice, RUNNING on a3-[0-1])` for each job, at most [`MAX_JOBS_LISTED`],
/// then how many more.
fn job_lines<'j>(jobs: impl ExactSizeIterator<Item = &'j RunningJob>) -> Vec<String> {
    let total = jobs.len();
    let mut lines: Vec<String> = jobs
        .take(MAX_JOBS_LISTED)
        .map(|job| {
            let id = job.id.map_or_else(|| "?".to_owned(), |id| id.to_string());
            let name = job
                .name
                .as_deref()
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            let user = job.user.as_deref().unwrap_or("?");
            let nodes = job
                .nodes
                .as_deref()
                .map(|n| format!(" on {n}"))
                .unwrap_or_default();
            format!("  {id}{name} ({user}, {}{nodes})", job.state)
        })
        .collect();
    if total > MAX_JOBS_LISTED {
        lines.push(format!("  and {} more", total - MAX_JOBS_LISTED));
    }
    lines
}

/// Whether and how to colour.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paint {
    pub(crate) color: bool,
}

impl Paint {
    pub(crate) fn style(self, style: Style, text: &str) -> String {
        if self.color {
            style.force_styling(true).apply_to(text).to_string()
        } else {
            text.to_owned()
        }
    }

    /// A change symbol right-aligned in three columns, as Terraform writes `  ~` and `-/+`.
    fn symbol(self, symbol: &str) -> String {
        let pad = " ".repeat(3usize.saturating_sub(symbol.chars().count()));
        let coloured = match symbol {
            "+" => self.style(Style::new().green(), "+"),
            "-" => self.style(Style::new().red(), "-"),
            "~" => self.style(Style::new().yellow(), "~"),
            "-/+" => format!(
                "{}/{}",
                self.style(Style::new().red(), "-"),
                self.style(Style::new().green(), "+")
            ),
            other => other.to_owned(),
        };
        format!("{pad}{coloured}")
    }
}

/// The lines of one cluster.
struct ClusterText<'a> {
    out: &'a mut String,
    paint: Paint,
    /// The cluster as the header names it.
    name: String,
    /// The prices its cost is shown at, if any.
    prices: Option<&'a PriceList>,
}

impl ClusterText<'_> {
    fn render(&mut self, change: &ClusterChange, jobs: Option<&RunningJobs>) {
        if let Some(drift) = drift_line(change, &self.name) {
            let _ = writeln!(
                self.out,
                "  {}",
                self.paint.style(Style::new().yellow(), &drift)
            );
        }
        let id = change.address.id();
        let header = self.paint.style(
            Style::new().bold(),
            &format!("# {} {}", self.name, headline(change)),
        );
        let _ = writeln!(self.out, "  {header}");
        if let Some(line) = gpus::cluster_line(&change.gpu_change()) {
            let _ = writeln!(self.out, "  # {line}");
        }
        let cost = self
            .prices
            .and_then(|prices| costs::cluster_line(&change.cost_change(prices), &prices.currency));
        if let Some(line) = cost {
            let _ = writeln!(self.out, "  # {line}");
        }
        let _ = writeln!(
            self.out,
            "{} cluster \"{id}\" {{",
            self.paint.symbol(symbol(change.action))
        );
        let tree = Tree::build(change);
        self.block(&tree, "", 1);
        self.out.push_str("    }\n");
        self.footer(change, jobs);
    }

    fn footer(&mut self, change: &ClusterChange, jobs: Option<&RunningJobs>) {
        if !change.update_mask().is_empty() {
            let mask: Vec<&str> = change.update_mask().iter().map(|m| m.as_str()).collect();
            let _ = writeln!(self.out, "    update mask: {}", mask.join(", "));
            let provider_only: Vec<&str> = change
                .update_mask()
                .iter()
                .filter(|m| m.source() == MaskSource::TerraformProvider)
                .map(|m| m.as_str())
                .collect();
            if !provider_only.is_empty() {
                let _ = writeln!(
                    self.out,
                    "    # {} is vouched for by the Terraform provider only: if the service \
                     refuses it, the cluster is unchanged (--replace forces the change)",
                    provider_only.join(", ")
                );
            }
        }
        if let Some(mode) = &change.update_mode() {
            let _ = writeln!(
                self.out,
                "    update mode: {mode} ({})",
                mode_meaning(*mode, recreates_nodes(change))
            );
        }
        if !change.impacts.is_empty() {
            let impacts: Vec<String> = change.impacts.iter().map(ToString::to_string).collect();
            let _ = writeln!(self.out, "    impact: {}", impacts.join("; "));
        }
        for chain in &change.capacity.chains {
            let alternatives: Vec<String> =
                chain.alternatives.iter().map(alternative_text).collect();
            let _ = writeln!(
                self.out,
                "    # node pool \"{}\" falls back to: {}",
                chain.pool,
                alternatives.join(", ")
            );
        }
        if let Some(out) = change.capacity.known_out {
            let _ = writeln!(self.out, "    # {}", known_out_line(out, change));
        }
        if change.action == Action::Replace {
            for line in replacement_lines(change) {
                let _ = writeln!(self.out, "    # {line}");
            }
        }
        for running in &change.capacity.running {
            let _ = writeln!(self.out, "    # {}", running_line(running));
        }
        for warning in &change.warnings {
            let label = self.paint.style(Style::new().yellow().bold(), "Warning:");
            let _ = writeln!(self.out, "    {label} {}", notes::plan_warning(warning));
        }
        if let Some(line) = in_error_line(change) {
            let label = self.paint.style(Style::new().yellow().bold(), "Warning:");
            let _ = writeln!(self.out, "    {label} {line}");
        }
        if let Some(ChangeReason::RecreateAfterIdle { evidence, .. }) = &change.reason {
            let _ = writeln!(self.out, "    # its Slurm then: {evidence}");
        }
        if let Some(jobs) = jobs {
            for line in running_jobs_lines(&change.disruption(), jobs) {
                let _ = writeln!(self.out, "    # {line}");
            }
        }
    }

    /// The contents of the block at `path`, whose children sit at `depth`.
    fn block(&mut self, tree: &Tree<'_>, path: &str, depth: usize) {
        let Some(node) = tree.nodes.get(path) else {
            return;
        };
        // Terraform aligns the `=` of the attributes of one block.
        let width = node
            .children
            .iter()
            .filter_map(|child| match child {
                Child::Attribute(change) => Some(attribute_name(change).chars().count()),
                Child::Block(_) => None,
            })
            .max()
            .unwrap_or(0);
        for child in &node.children {
            match child {
                Child::Attribute(change) => self.attribute(change, depth, width),
                Child::Block(child_path) => {
                    let symbol = tree.block_symbol(child_path);
                    let label = tree.labels.get(child_path).map_or("?", String::as_str);
                    let _ = writeln!(
                        self.out,
                        "{}{} {label} {{",
                        indent(depth - 1),
                        self.paint.symbol(symbol)
                    );
                    self.block(tree, child_path, depth + 1);
                    let _ = writeln!(self.out, "{}}}", indent(depth));
                }
            }
        }
        self.hidden(depth, node.hidden_attributes, "attribute");
        self.hidden(depth, node.hidden_blocks, "block");
    }

    /// `# (N unchanged attributes hidden)`, when there are some.
    fn hidden(&mut self, depth: usize, count: usize, noun: &str) {
        if count > 0 {
            let _ = writeln!(
                self.out,
                "{}# ({count} unchanged {} hidden)",
                indent(depth),
                plural(count, noun)
            );
        }
    }

    fn attribute(&mut self, change: &FieldChange, depth: usize, width: usize) {
        let name = format!("{:<width$}", attribute_name(change));
        let kind = kind_of(change.path.segments());
        let symbol = symbol_of(&[change]);
        let lead = format!("{}{}", indent(depth - 1), self.paint.symbol(symbol));
        let mut note = String::new();
        if change.forces_replacement {
            note.push_str(&format!(
                " {}",
                self.paint.style(Style::new().red(), "# forces replacement")
            ));
        }
        if matches!(kind, Some(FieldKind::KeyedList(_)))
            && change
                .path
                .segments()
                .last()
                .is_some_and(|s| s.selector.is_none())
        {
            note.push_str(" # order");
        }
        if change.sensitive {
            let _ = writeln!(self.out, "{lead} {name} = {SENSITIVE}{note}");
            return;
        }
        if matches!(kind, Some(FieldKind::StringMap | FieldKind::SlurmConfig)) {
            self.map(change, &lead, &name, &note, depth);
            return;
        }
        let (before, after) = (change.before.as_ref(), change.after.as_ref());
        let head = format!("{lead} {name} =");
        if let Some(texts) = texts(before, after) {
            let _ = writeln!(self.out, "{head} <<-EOT{note}");
            self.heredoc(texts, depth, removal_suffix(after.is_none()));
        } else if let Some(lists) = lists_of_texts(before, after) {
            self.list_of_texts(&head, &note, lists, depth);
        } else {
            let _ = writeln!(self.out, "{head} {}{note}", transition(before, after));
        }
    }

    /// The body and closing `EOT` of a heredoc whose opening line names the value at `depth`
    /// (its lines sit one level deeper), then `suffix`.
    fn heredoc(&mut self, (before, after): Texts<'_>, depth: usize, suffix: &str) {
        for line in heredoc::body(before, after) {
            match line {
                Line::Plain(text) if text.is_empty() => self.out.push('\n'),
                Line::Plain(text) => {
                    let _ = writeln!(self.out, "{}{text}", indent(depth + 1));
                }
                Line::Changed(symbol, text) => {
                    let line = format!("{}{} {text}", indent(depth), self.paint.symbol(symbol));
                    let _ = writeln!(self.out, "{}", line.trim_end());
                }
                Line::Hidden(count) => {
                    let _ = writeln!(
                        self.out,
                        "{}# ({count} unchanged {} hidden)",
                        indent(depth + 1),
                        plural(count, "line")
                    );
                }
            }
        }
        let _ = writeln!(self.out, "{}EOT{suffix}", indent(depth));
    }

    /// A list of strings of which some span lines (prolog and epilog scripts), element by
    /// element as Terraform shows lists; an element edited in place is diffed line by line.
    fn list_of_texts(&mut self, head: &str, note: &str, (before, after): Lists<'_>, depth: usize) {
        let _ = writeln!(self.out, "{head} [{note}");
        let suffix = removal_suffix(after.is_none());
        let (old, new) = (before.unwrap_or_default(), after.unwrap_or_default());
        for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            let (removed, added) = (&old[old_range], &new[new_range]);
            if tag == similar::DiffTag::Equal {
                for text in added {
                    self.element(" ", text, depth);
                }
                continue;
            }
            let paired = removed.len().min(added.len());
            for (old_text, new_text) in removed.iter().zip(added) {
                // A script edited in place reads best as a line diff; anything else as the
                // removal of one element and the addition of another.
                if old_text.contains('\n') && new_text.contains('\n') {
                    self.edited_element(old_text, new_text, depth);
                } else {
                    self.element("-", old_text, depth);
                    self.element("+", new_text, depth);
                }
            }
            for text in &removed[paired..] {
                self.element("-", text, depth);
            }
            for text in &added[paired..] {
                self.element("+", text, depth);
            }
        }
        let _ = writeln!(self.out, "{}]{suffix}", indent(depth));
    }

    /// One whole element of a list of strings at `depth`, kept (` `), removed or added.
    fn element(&mut self, symbol: &str, text: &str, depth: usize) {
        let lead = format!("{}{}", indent(depth), self.paint.symbol(symbol));
        if text.contains('\n') {
            let _ = writeln!(self.out, "{lead} <<-EOT");
            self.heredoc((None, Some(text)), depth + 1, ",");
        } else {
            let _ = writeln!(self.out, "{lead} {},", quoted(text));
        }
    }

    /// An element of a list of strings at `depth` whose lines changed.
    fn edited_element(&mut self, before: &str, after: &str, depth: usize) {
        let _ = writeln!(
            self.out,
            "{}{} <<-EOT",
            indent(depth),
            self.paint.symbol("~")
        );
        self.heredoc((Some(before), Some(after)), depth + 1, ",");
    }

    /// A map attribute, key by key.
    fn map(&mut self, change: &FieldChange, lead: &str, name: &str, note: &str, depth: usize) {
        let empty = Map::new();
        let before = change
            .before
            .as_ref()
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let after = change
            .after
            .as_ref()
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let _ = writeln!(self.out, "{lead} {name} = {{{note}");
        let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
        let changed: Vec<&String> = keys
            .into_iter()
            .filter(|key| before.get(key.as_str()) != after.get(key.as_str()))
            .collect();
        let width = changed
            .iter()
            .map(|key| Value::from(key.as_str()).to_string().chars().count())
            .max()
            .unwrap_or(0);
        for key in changed {
            let (old, new) = (before.get(key.as_str()), after.get(key.as_str()));
            let symbol = match (old, new) {
                (None, _) => "+",
                (_, None) => "-",
                _ => "~",
            };
            let _ = writeln!(
                self.out,
                "{}{} {:<width$} = {}",
                indent(depth),
                self.paint.symbol(symbol),
                Value::from(key.as_str()).to_string(),
                transition(old, new)
            );
        }
        let _ = writeln!(self.out, "{}}}", indent(depth));
    }
}

/// The attribute's own name: the last segment of its path.
fn attribute_name(change: &FieldChange) -> String {
    change
        .path
        .segments()
        .last()
        .map_or_else(|| change.path.to_string(), label_of)
}

/// `a3-ultragpu-8g (FLEX_START)`: what one alternative of a pool runs on.
pub fn alternative_text(alternative: &PoolAlternative) -> String {
    let machine = alternative
        .machine_type
        .as_deref()
        .unwrap_or("the pool's machine type");
    match &alternative.provisioning_model {
        Some(model) => format!("{machine} ({model})"),
        None => machine.to_owned(),
    }
}

/// A live pool that runs one of its fallbacks, which matches its declaration.
fn running_line(running: &RunningAlternative) -> String {
    format!(
        "node pool \"{}\" runs {}, its alternative in {}, which matches its declaration",
        running.pool,
        alternative_text(&running.alternative),
        running.attempt
    )
}

/// Drift entries named one by one on the "changed outside clusterform" line; the rest are
/// counted.
const MAX_DRIFT_LISTED: usize = 10;

/// `# train01 changed outside clusterform: labels.hotfix added, …`, shown above the change of
/// a cluster whose fields the applied record says were changed outside clusterform, whatever
/// the configuration changed too; ten fields named at most.
fn drift_line(change: &ClusterChange, name: &str) -> Option<String> {
    if change.drift.is_empty() {
        return None;
    }
    let mut listed: Vec<String> = change
        .drift
        .iter()
        .take(MAX_DRIFT_LISTED)
        .map(|drift| format!("{} {}", drift.path, drift.how))
        .collect();
    if change.drift.len() > MAX_DRIFT_LISTED {
        listed.push(format!(
            "and {} more",
            change.drift.len() - MAX_DRIFT_LISTED
        ));
    }
    Some(format!(
        "# {name} changed outside clusterform: {}",
        listed.join(", ")
    ))
}

/// Where a chain whose place no journal kept goes on: after the attempt the live cluster runs.
fn known_out_line(out: Attempt, change: &ClusterChange) -> String {
    let attempts = change.capacity.fallbacks.len() + 1;
    let tried = if out == Attempt::DECLARED {
        "attempt 1 (the pools as declared)".to_owned()
    } else {
        format!("attempts 1 to {}", out.number())
    };
    format!(
        "the cluster never started and runs the pools of {out}, so {tried} found no machines; apply goes on with {} of {attempts}",
        out.next()
    )
}

/// A cluster in ERROR that the plan does not replace: what the service says, since when, and
/// how to replace it.
fn in_error_line(change: &ClusterChange) -> Option<String> {
    let in_error = change.in_error.as_ref()?;
    let since = in_error
        .since
        .as_ref()
        .map(|since| format!(" since {since}"))
        .unwrap_or_default();
    let detail = in_error
        .detail
        .as_ref()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    Some(format!(
        "the cluster is in {}{since}{detail}; it is left as it is, since no create of \
         clusterform's failed there: `clusterform apply --replace {}` replaces it",
        in_error.state,
        change.address.id()
    ))
}

/// What happens to the cluster and, where the fields do not say it, why.
fn headline(change: &ClusterChange) -> String {
    let reason = change.reason.as_ref();
    match (change.action, reason) {
        (_, Some(ChangeReason::Broken { state, detail })) => {
            let detail = detail
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            format!("is in {state}{detail}; it will be replaced")
        }
        (Action::Create, Some(ChangeReason::BeingDeleted)) => {
            "is being deleted; it will be created again once it is gone".to_owned()
        }
        (Action::Delete, Some(ChangeReason::BeingDeleted)) => {
            "is being deleted already; clusterform waits until it is gone".to_owned()
        }
        (
            Action::Create,
            Some(ChangeReason::RecreateAfterIdle {
                deleted_at,
                idle_for,
                ..
            }),
        ) => {
            let flag = match idle_for.as_str() {
                "" => "destroy --idle-for".to_owned(),
                idle_for => format!("destroy --idle-for {idle_for}"),
            };
            format!("was deleted for being idle at {deleted_at} ({flag}); apply creates it again")
        }
        (Action::Delete, Some(ChangeReason::Idle { evidence, .. })) => {
            format!("will be destroyed: idle ({evidence})")
        }
        (Action::Delete, Some(ChangeReason::NoLongerDeclared { stack })) => {
            format!(
                "will be destroyed: owned by stack \"{stack}\" and no longer in the configuration"
            )
        }
        (Action::Delete, _) => {
            "will be destroyed: declared in this configuration, and destroy was requested"
                .to_owned()
        }
        (Action::Create, _) => "will be created".to_owned(),
        (Action::Update, _) => "will be updated in place".to_owned(),
        (Action::Replace, Some(ChangeReason::ReplaceRequested)) => {
            "will be replaced, as requested".to_owned()
        }
        (Action::Replace, _) => "must be replaced".to_owned(),
        (Action::Release, _) => "will no longer be managed (not destroyed)".to_owned(),
        (Action::NoOp, _) => "is up to date".to_owned(),
    }
}

/// What the update mode adds to this change. A change that recreates no node is told so,
/// since the service's own refresh of a startup script is then the only way its nodes go.
fn mode_meaning(mode: UpdateMode, change_recreates_nodes: bool) -> String {
    let service_refresh = if change_recreates_nodes {
        "the service may also refresh the startup, prolog and epilog scripts it manages; a refreshed startup script recreates the pool's nodes"
    } else {
        "the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script"
    };
    match mode {
        UpdateMode::UserOnly => {
            "only the fields you set; the service does not refresh its managed fields".to_owned()
        }
        UpdateMode::Unspecified => format!("treated as USER_AND_SERVICE: {service_refresh}"),
        UpdateMode::UserAndService => service_refresh.to_owned(),
    }
}

/// Whether the change itself recreates the nodes of a pool (its impacts say so).
fn recreates_nodes(change: &ClusterChange) -> bool {
    change
        .impacts
        .iter()
        .any(|impact| impact.class == ImpactClass::RecreatesNodes)
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// The text column of the children of a block at `depth` (the cluster's are at depth 1).
fn indent(depth: usize) -> String {
    " ".repeat(4 * depth + 4)
}

/// `+`, `-` or `~` for a set of changes: all additions, all removals, or anything else.
fn symbol_of(changes: &[&FieldChange]) -> &'static str {
    if changes.iter().all(|c| c.before.is_none()) {
        "+"
    } else if changes.iter().all(|c| c.after.is_none()) {
        "-"
    } else {
        "~"
    }
}

/// The two sides of a string value, one of them possibly absent.
type Texts<'a> = (Option<&'a str>, Option<&'a str>);

/// The two sides of a list of strings, one of them possibly absent.
type Lists<'a> = (Option<Vec<&'a str>>, Option<Vec<&'a str>>);

/// Both sides as strings, when they are strings (or absent) and one of them spans lines.
fn texts<'a>(before: Option<&'a Value>, after: Option<&'a Value>) -> Option<Texts<'a>> {
    if !before.into_iter().chain(after).any(heredoc::is_multiline) {
        return None;
    }
    let text =
        |value: Option<&'a Value>| value.map(Value::as_str).map_or(Some(None), |t| t.map(Some));
    Some((text(before)?, text(after)?))
}

/// Both sides as lists of strings, when they are (or are absent) and some element spans lines.
fn lists_of_texts<'a>(before: Option<&'a Value>, after: Option<&'a Value>) -> Option<Lists<'a>> {
    let strings = |value: &'a Value| -> Option<Vec<&'a str>> {
        value.as_array()?.iter().map(Value::as_str).collect()
    };
    let side = |value: Option<&'a Value>| value.map(strings).map_or(Some(None), |l| l.map(Some));
    let lists = (side(before)?, side(after)?);
    let multiline = [&lists.0, &lists.1]
        .into_iter()
        .flatten()
        .flatten()
        .any(|text| text.contains('\n'));
    multiline.then_some(lists)
}

/// ` -> null` after the last line of a value that goes away.
fn removal_suffix(removed: bool) -> &'static str {
    if removed { " -> null" } else { "" }
}

/// `new`, `old -> null` or `old -> new`.
fn transition(before: Option<&Value>, after: Option<&Value>) -> String {
    match (before, after) {
        (None, Some(after)) => show(after),
        (Some(before), None) => format!("{} -> null", show(before)),
        (Some(before), Some(after)) => format!("{} -> {}", show(before), show(after)),
        (None, None) => "null".to_owned(),
    }
}

/// A value in HCL-like notation.
fn show(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{} = {}", Value::from(k.as_str()), show(v)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
        Value::String(text) => quoted(text),
        other => other.to_string(),
    }
}

/// A string as HCL writes it between quotes: JSON's escapes, plus `$${` and `%%{` so that a
/// template sequence reads back as text.
fn quoted(text: &str) -> String {
    heredoc::escape(&Value::from(text).to_string())
}

/// `node_pool "cpu"` for an element of a keyed list, the field name otherwise.
fn label_of(segment: &Segment) -> String {
    match &segment.selector {
        Some(Selector::Key(key)) => format!(
            "{} {}",
            paths::block_name(&segment.name),
            Value::from(key.as_str())
        ),
        Some(Selector::Any) => format!("{}[]", segment.name),
        None => segment.name.clone(),
    }
}

fn kind_of(segments: &[Segment]) -> Option<FieldKind> {
    let generic = paths::generic(segments);
    fields::lookup(generic.strip_suffix("[]").unwrap_or(&generic)).map(|spec| spec.kind)
}

/// A cluster's changes arranged as nested blocks.
struct Tree<'a> {
    nodes: BTreeMap<String, Node<'a>>,
    labels: BTreeMap<String, String>,
    all: Vec<&'a FieldChange>,
    existing: BTreeSet<&'a str>,
}

#[derive(Default)]
struct Node<'a> {
    children: Vec<Child<'a>>,
    hidden_attributes: usize,
    hidden_blocks: usize,
}

enum Child<'a> {
    Attribute(&'a FieldChange),
    Block(String),
}

impl<'a> Tree<'a> {
    fn build(change: &'a ClusterChange) -> Self {
        let mut tree = Tree {
            nodes: BTreeMap::from([(String::new(), Node::default())]),
            labels: BTreeMap::new(),
            all: change.fields.iter().collect(),
            existing: change
                .unchanged_attributes
                .keys()
                .map(String::as_str)
                .collect(),
        };
        for field in &change.fields {
            tree.insert(field);
        }
        tree.hide_unchanged(&change.unchanged_attributes);
        tree
    }

    fn insert(&mut self, field: &'a FieldChange) {
        let segments = field.path.segments();
        let mut parent = String::new();
        for len in 1..segments.len() {
            let path = joined(&segments[..len]);
            if !self.nodes.contains_key(&path) {
                self.nodes.insert(path.clone(), Node::default());
                self.labels
                    .insert(path.clone(), label_of(&segments[len - 1]));
                self.push_child(&parent, Child::Block(path.clone()));
            }
            parent = path;
        }
        self.push_child(&parent, Child::Attribute(field));
    }

    fn push_child(&mut self, parent: &str, child: Child<'a>) {
        if let Some(node) = self.nodes.get_mut(parent) {
            node.children.push(child);
        }
    }

    /// Counts unchanged attributes in shown blocks, and unchanged blocks in their nearest shown
    /// parent.
    fn hide_unchanged(&mut self, unchanged: &BTreeMap<String, usize>) {
        let mut hidden_blocks: BTreeSet<(String, String)> = BTreeSet::new();
        for (path, count) in unchanged {
            if let Some(node) = self.nodes.get_mut(path) {
                node.hidden_attributes = *count;
                continue;
            }
            let segments = paths::parse(path).unwrap_or_default();
            for len in 1..=segments.len() {
                let prefix = joined(&segments[..len]);
                if !self.nodes.contains_key(&prefix) {
                    hidden_blocks.insert((joined(&segments[..len - 1]), prefix));
                    break;
                }
            }
        }
        for (parent, _) in hidden_blocks {
            if let Some(node) = self.nodes.get_mut(&parent) {
                node.hidden_blocks += 1;
            }
        }
    }

    /// `+` for a block that is new, `-` for one that goes away, `~` for one that exists on both
    /// sides (the diff records every such block in the unchanged counts).
    fn block_symbol(&self, path: &str) -> &'static str {
        if self.existing.contains(path) {
            return "~";
        }
        let within: Vec<&FieldChange> = self
            .all
            .iter()
            .copied()
            .filter(|c| c.path.is_within(path))
            .collect();
        symbol_of(&within)
    }
}

fn joined(segments: &[Segment]) -> String {
    segments
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(".")
}
