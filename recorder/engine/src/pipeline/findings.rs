//! After every outcome: findings read from the wire tape, and a proposal
//! for each (by the judge when there is one and the spend cap allows).

use super::run::Run;
use crate::model::client_for;

impl Run<'_> {
    /// Findings from the tapes and a proposal per finding, for every
    /// outcome. A failure here never costs the record: it becomes a note.
    pub(super) async fn findings_and_proposals(&mut self) {
        if self.tools.is_empty() {
            return;
        }
        let labels = match &self.generation {
            Some(g) => g.destructiveness.clone(),
            None => crate::suite::destructive::labels_by_rule(&self.tools),
        };
        let inputs = crate::rewrite::findings::Inputs {
            dir: &self.dir,
            tools: &self.tools,
            tasks: &self.tasks,
            destructiveness: &labels,
        };
        let wire = match crate::rewrite::findings::read_wire(
            &self.dir.join(fitness_shared::site::MCP_TAPE),
        ) {
            Ok(w) => w,
            Err(e) => {
                self.own_notes.push(format!(
                    "No findings: the wire tape could not be read: {e:#}"
                ));
                return;
            }
        };
        self.findings = crate::rewrite::findings::from_wire(&wire, &inputs);
        if self.findings.is_empty() {
            return;
        }
        let ctx = crate::rewrite::proposals::Context {
            tools: &self.tools,
            tasks: &self.tasks,
            wire: &wire,
        };
        let judge = match (&self.cfg.settings.judge, &self.interrupted) {
            (Some(id), None) => client_for(id, &self.options())
                .ok()
                .map(|judge| self.meter.wrap(judge)),
            _ => None,
        };
        let within_cap = self.meter.has_room();
        self.proposals = match judge {
            Some(judge)
                if within_cap
                    && !crate::rewrite::proposals::rules_stand_in(Some(judge.as_ref())) =>
            {
                let (proposals, spend) = crate::rewrite::proposals::by_judge(
                    judge.as_ref(),
                    &self.findings,
                    &ctx,
                    &self.agent,
                )
                .await;
                self.add_spend(std::slice::from_ref(&spend));
                proposals
            }
            _ => crate::rewrite::proposals::by_rules(&self.findings, &ctx),
        };
    }
}
