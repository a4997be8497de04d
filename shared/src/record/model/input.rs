//! A server's requests for input in the middle of a call (sampling,
//! elicitation): how a run registered it would answer them, and what the
//! server asked.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a run answers a server's `elicitation/create`, registered before
/// the run: no person is there to answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ElicitationPolicy {
    /// Every request is declined.
    #[default]
    Decline,
    /// A form is accepted with the values its own schema gives (its
    /// defaults, else its first choices); a request by URL is declined.
    Accept,
}

impl ElicitationPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationPolicy::Decline => "decline",
            ElicitationPolicy::Accept => "accept",
        }
    }
}

impl std::str::FromStr for ElicitationPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "decline" => Ok(ElicitationPolicy::Decline),
            "accept" => Ok(ElicitationPolicy::Accept),
            other => Err(format!(
                "{other:?} is no elicitation policy: use decline or accept"
            )),
        }
    }
}

/// How a run answers the server's requests for input (registered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InputPolicy {
    /// `sampling/createMessage` is answered by the runner model in the
    /// agent's and the reference agent's trials (never in generation or
    /// a null arm), its tokens on the agent tape and in the spend.
    pub sampling: bool,
    pub elicitation: ElicitationPolicy,
}

/// The requests for input the server made during a run, and how they
/// were answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InputRequests {
    pub sampling: u64,
    /// Sampling requests the runner answered (the rest were refused: a
    /// stage that gets no model's help, or a failed model call).
    pub sampling_answered: u64,
    pub elicitation: u64,
    pub elicitation_accepted: u64,
    pub elicitation_declined: u64,
}
