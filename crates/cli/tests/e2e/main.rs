//! The `blocksweep` binary end to end, one test binary for every subject (each module one):
//! 33 binaries linked the same dependencies 33 times, a minute of a fresh `make test` on two
//! cores. The helpers are `support` (the binary, the APIs here, JSON and text) and
//! `kernel_support` (the example specs and a kernel run's JSON).

mod kernel_support;
mod support;

mod across_cpu;
mod across_e2e;
mod bad_input;
mod bug_zoo;
mod cli_words;
mod clocks_cpu;
mod cold_cpu;
mod docs_as_printed;
mod envelope_replay;
mod files_everywhere;
mod hints_e2e;
mod interrupted;
mod json_schemas;
mod kernel_e2e;
mod lab_e2e;
mod launch_cost_e2e;
mod limits_files;
mod merged_e2e;
mod opencl_e2e;
mod output_formats;
mod output_h200;
mod output_safety;
mod output_widths;
mod output_words;
mod plot_browser;
mod progress_notes;
mod reference_e2e;
mod said_on_exit;
mod short_output;
mod subgroup_e2e;
mod sweep_outputs;
mod targets_e2e;
mod true_lines;
mod tune_e2e;
