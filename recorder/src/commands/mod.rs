//! The top floor: one module per subcommand family. Nothing below
//! `commands/` imports a command.

pub mod ask;
pub mod compare;
pub mod demo;
pub mod import;
pub mod keygen;
pub mod probe;
pub mod rewrite_check;
pub mod run;
pub mod sign;
pub mod suite;
pub mod tape;
pub mod target;
pub mod verify;
