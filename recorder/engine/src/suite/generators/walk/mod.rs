//! What both schema walks are made of: calling a tool and reading its
//! result (`call`), which tools a walk may call (`callable`), strings
//! harvested for later rounds (`harvest`), the salient answer of a result
//! (`salient`), and what a walk counts ([`WalkStats`]). No generator lives
//! here; `schema_walk1` and `schema_walk2` are built from these parts.

mod call;
mod callable;
mod harvest;
mod salient;
mod stats;

pub use crate::suite::call::{Called, call, result_text};
pub use call::{Taken, call_counted};
pub use callable::{Surface, callable_tools};
pub use harvest::{harvest, harvest_args};
pub use salient::{STOPWORDS, VOLATILE, salient};
pub use stats::{WalkOutcome, WalkStats, drop_unsatisfiable};
