//! What an entity the caller spawns is made of: murk's components, in the
//! JSON shapes of the scenario format (`docs/scenario.md`), and their
//! checks before anything reaches the world.

use murk_core::{AntiVision, Blocker, MurkError, Result, StealthActor, Tracked, TransientReveal, VisionSource};
use serde::Deserialize;

/// The components of one entity, each optional: a unit that sees, can be
/// seen and hides is a `source`, a `tracked` footprint and an `actor` at
/// once. JSON fields are snake_case, as in scenario files.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parts {
    /// A vision source.
    #[serde(default)]
    pub source: Option<VisionSource>,
    /// With a source: it reveals for this many ticks, then murk removes the
    /// entity (a flare, a sound ping).
    #[serde(default)]
    pub transient_ticks: Option<u32>,
    /// An occluder.
    #[serde(default)]
    pub blocker: Option<Blocker>,
    /// A stealth actor: its visibility follows the fog, with events.
    #[serde(default)]
    pub actor: Option<StealthActor>,
    /// An area hidden from the teams it targets.
    #[serde(default)]
    pub anti_vision: Option<AntiVision>,
    /// Tracked for the sight sets (`visible_to`), with this footprint.
    #[serde(default)]
    pub tracked: Option<Tracked>,
}

impl Parts {
    /// Parses the parts from JSON text; errors name `parts` and serde's
    /// line, column and field.
    pub fn parse(json: &str) -> Result<Self> {
        let parts: Parts = serde_json::from_str(json).map_err(|e| MurkError::Parse { what: "parts".into(), message: e.to_string() })?;
        parts.check()?;
        Ok(parts)
    }

    /// The checks that need no instance: finite numbers and ranges of every
    /// component, at least one component, `transient_ticks` only with a
    /// source and above zero. Errors name the field as `parts.<component>.*`.
    pub fn check(&self) -> Result<()> {
        let Parts { source, transient_ticks, blocker, actor, anti_vision, tracked } = self;
        if source.is_none() && blocker.is_none() && actor.is_none() && anti_vision.is_none() && tracked.is_none() {
            return Err(MurkError::invalid("parts", "{}", "needs at least one of source, blocker, actor, anti_vision, tracked"));
        }
        if let Some(s) = source {
            s.check("parts")?;
        }
        match (transient_ticks, source) {
            (Some(0), _) => return Err(MurkError::invalid("parts.transient_ticks", 0, "must be at least 1")),
            (Some(n), None) => return Err(MurkError::invalid("parts.transient_ticks", n, "needs a source to reveal with")),
            _ => {}
        }
        if let Some(b) = blocker {
            b.check("parts")?;
        }
        if let Some(a) = actor {
            if !(a.cutoff_override.is_finite() && a.cutoff_override <= 1.0) {
                return Err(MurkError::invalid(
                    "parts.actor.cutoff_override",
                    a.cutoff_override,
                    "must be finite and at most 1 (negative: the instance's)",
                ));
            }
            if !(a.fade_seconds.is_finite() && a.fade_seconds >= 0.0) {
                return Err(MurkError::invalid("parts.actor.fade_seconds", a.fade_seconds, "must be finite and not negative"));
            }
        }
        if let Some(a) = anti_vision {
            if !(a.radius.is_finite() && a.radius >= 0.0) {
                return Err(MurkError::invalid("parts.anti_vision.radius", a.radius, "must be finite and not negative"));
            }
            if !(0.0..=1.0).contains(&a.falloff) {
                return Err(MurkError::invalid("parts.anti_vision.falloff", a.falloff, "must be within 0..=1"));
            }
        }
        if let Some(t) = tracked {
            if !(t.footprint.is_finite() && t.footprint >= 0.0) {
                return Err(MurkError::invalid("parts.tracked.footprint", t.footprint, "must be finite and not negative"));
            }
        }
        Ok(())
    }

    /// The components, for `hecs::World::spawn`.
    pub(crate) fn build(&self, builder: &mut murk_core::hecs::EntityBuilder) {
        if let Some(s) = self.source {
            builder.add(s);
        }
        if let Some(n) = self.transient_ticks {
            builder.add(TransientReveal { remaining_ticks: n });
        }
        if let Some(b) = &self.blocker {
            builder.add(b.clone());
        }
        if let Some(a) = &self.actor {
            builder.add(a.clone());
        }
        if let Some(a) = self.anti_vision {
            builder.add(a);
        }
        if let Some(t) = self.tracked {
            builder.add(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_with_a_negative_radius_is_named() {
        let e = Parts::parse(r#"{"source": {"radius": -2}}"#).unwrap_err().to_string();
        assert!(e.contains("parts.source.radius = -2"), "{e}");
    }

    #[test]
    fn an_unknown_field_is_named_by_serde() {
        let e = Parts::parse(r#"{"source": {"radus": 2}}"#).unwrap_err().to_string();
        assert!(e.contains("radus"), "{e}");
    }

    #[test]
    fn empty_parts_and_a_transient_without_a_source_are_refused() {
        assert!(Parts::parse("{}").unwrap_err().to_string().contains("needs at least one"));
        let e = Parts::parse(r#"{"transient_ticks": 3, "tracked": {"footprint": 1}}"#).unwrap_err().to_string();
        assert!(e.contains("parts.transient_ticks = 3"), "{e}");
    }

    #[test]
    fn a_unit_may_see_be_tracked_and_hide_at_once() {
        let p = Parts::parse(r#"{"source": {"radius": 8}, "tracked": {"footprint": 0.5}, "actor": {"hide_mode": "freeze_with_ghost"}}"#).unwrap();
        assert_eq!(p.source.map(|s| s.radius), Some(8.0));
        assert!(p.tracked.is_some() && p.actor.is_some());
    }
}
