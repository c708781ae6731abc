//! The premade looks by name: what a tool or a test picks one with.

use murk_core::error::{MurkError, Result};

/// One of the premade looks of [`crate::Looks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Look {
    /// The state overlay ([`crate::Looks::overlay`]).
    Overlay,
    /// The 3D fog surface ([`crate::Looks::surface`]).
    Surface,
    /// Volumetric ground fog ([`crate::Looks::volume`]).
    Volume,
}

impl Look {
    /// Every look, in the order the docs list them.
    pub const ALL: [Look; 3] = [Look::Overlay, Look::Surface, Look::Volume];

    /// The look's name (`overlay`, `surface`, `volume`): in file names,
    /// golden names and command lines.
    pub fn name(self) -> &'static str {
        match self {
            Look::Overlay => "overlay",
            Look::Surface => "surface",
            Look::Volume => "volume",
        }
    }

    /// The look named `name`; another name is an error listing the looks.
    pub fn parse(name: &str) -> Result<Look> {
        Look::ALL.into_iter().find(|l| l.name() == name).ok_or_else(|| MurkError::invalid("look", name, "must be overlay, surface or volume"))
    }
}

impl std::fmt::Display for Look {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Look {
    type Err = MurkError;

    fn from_str(s: &str) -> Result<Look> {
        Look::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_one_is_named() {
        for look in Look::ALL {
            assert_eq!(look.name().parse::<Look>().unwrap(), look);
        }
        let e = Look::parse("fog").unwrap_err().to_string();
        assert!(e.contains("look = fog: must be overlay, surface or volume"), "{e}");
    }
}
