//! One module per subcommand family.

pub mod probe;
pub mod tape;
