//! The integration tests, one binary (one link of the whole stack instead of one a file): a module per
//! concern, each file opening with what it tests. Run one concern with `cargo test --release --test suite NAME::`.

mod common;
mod games;

mod board_construction;
mod calibration;
mod discs;
mod fuzz;
mod ground_height;
mod hardening;
mod lens;
mod locate;
mod match_cli;
mod match_ends;
mod match_games;
mod parsers;
mod pipeline;
mod real_sjoelbak;
mod render;
mod render_construction;
mod rules_examples;
mod serve_browser;
mod setup;
mod team_colours;
mod team_pairs;
mod washer_stacks;
mod watch;
mod weight_caps;
