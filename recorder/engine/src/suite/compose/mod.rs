//! The composer: questions a person would set over what a server holds
//! ([`crate::suite::holdings`]), shared by every generator that builds
//! that model. Each question is a query plan ([`plans`]): a count, a
//! total or an average, the largest or the earliest, two records compared,
//! a link followed, a set; worded as a person asks ([`words`]); its answer
//! computed from every record the harness read, never from the first rows;
//! checked by a predicate typed by the answer (a number as a number, a set
//! in any order). [`prove`] then runs each question's reference query
//! through the server and again in a fresh server process: a question
//! whose query disagrees, whose answer changes, or that has two right
//! answers is rejected by a named rule, never admitted.
//!
//! The composer imports no generator: generators hand it the model.

mod choose;
mod edges;
mod fields;
mod plans;
pub mod prove;
mod question;
mod sql;
mod words;

pub use choose::compose;
pub use question::{Answer, Composed, number_text_of};
pub use sql::ident as sql_ident;
