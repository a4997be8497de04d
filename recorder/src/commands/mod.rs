//! One module per subcommand.

pub mod import;
pub mod keygen;
pub mod sign;
pub mod verify;
