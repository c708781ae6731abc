//! An independent judge of the sight contract (`docs/multiplayer.md`):
//! whether an observer's teams see a tracked entity, worked out by brute
//! force from the sources, walls, anti-vision areas and reveals, with none
//! of murk's passes, masks or sets.
//!
//! It knows the ray rule as `docs/determinism.md` defines it, restated
//! over geometry rather than as a march: a texel is passed through when
//! the open segment between the two texel centres meets its open square;
//! where the segment runs exactly through a corner of the grid, the two
//! texels that only touch it block together or not at all. It covers what
//! a test world needs, and refuses the rest rather than guessing: a grid
//! of one world unit a texel from the origin, a slab whose height unit is
//! one world unit from 0, walls as axis-aligned rectangles on whole units,
//! sources with a hard edge (`falloff: Some(0)`) and no cone, anti-vision
//! with a hard edge, and circular sight reveals at full strength.

use murk_core::glam::Vec2;
use murk_core::hecs::World;
use murk_core::{AntiVision, Blocker, BlockerShape, Position, TeamMask, VisionSource};

/// A source's eye, in the judge's terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eye {
    /// Where it stands (world = texel units).
    pub at: Vec2,
    /// Eye height (height units, one per world unit).
    pub eye: i64,
    /// Sight radius.
    pub radius: f32,
    /// Its team.
    pub team: u8,
    /// Sees through every wall.
    pub see_through: bool,
}

/// A wall: the texels `min..max` (whole units), `top` high (`None`: above
/// every eye).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wall {
    /// The first texel covered, x and y.
    pub min: [i64; 2],
    /// One past the last texel covered.
    pub max: [i64; 2],
    /// Its top in height units, `None` for a wall nothing sees over.
    pub top: Option<i64>,
}

/// An area hidden from some teams.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Anti {
    /// Its centre.
    pub at: Vec2,
    /// Its radius.
    pub radius: f32,
    /// The teams it hides from.
    pub targets: TeamMask,
}

/// A circular sight reveal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Disc {
    /// Its centre.
    pub at: Vec2,
    /// Its radius.
    pub radius: f32,
}

/// Everything the judge reads, over a `width` x `height` grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    /// Grid width in texels (= world units).
    pub width: i64,
    /// Grid height.
    pub height: i64,
    /// The vision sources.
    pub eyes: Vec<Eye>,
    /// The walls.
    pub walls: Vec<Wall>,
    /// The anti-vision areas.
    pub anti: Vec<Anti>,
    /// Sight reveals per observer's teams: the teams a reveal was made
    /// for, and its disc.
    pub reveals: Vec<(TeamMask, Disc)>,
    /// Covered texels show what their uncovered neighbours show (the
    /// profile's `reveal_walls`).
    pub reveal_walls: bool,
}

/// Q3 (eighths) of a world coordinate the judge can hold exactly.
fn q3(v: f32) -> i64 {
    let q = f64::from(v) * 8.0;
    assert!(q.fract() == 0.0, "the judge takes positions and radii on eighths of a unit, not {v}");
    q as i64
}

/// A texel centre in Q3.
fn centre(t: i64) -> i64 {
    8 * t + 4
}

impl Scene {
    /// The scene of a murk world over a `width` x `height` grid: its
    /// sources, blockers and anti-vision areas (reveals are the caller's
    /// to add). Panics on what the judge does not cover.
    pub fn of_world(world: &World, width: i64, height: i64) -> Self {
        let mut scene = Scene { width, height, reveal_walls: true, ..Scene::default() };
        for (p, s) in world.query::<(&Position, &VisionSource)>().iter() {
            assert!(s.cone.is_none() && s.falloff == Some(0.0) && s.height_layer.is_none(), "the judge takes hard-edged sources without cones");
            assert!(s.eye_offset == murk_core::glam::Vec3::ZERO, "the judge takes sources without an eye offset");
            let eye = f64::from(p.0.z) + f64::from(s.eye_height);
            assert!(eye.fract() == 0.0, "the judge takes eyes on whole units");
            scene.eyes.push(Eye { at: p.0.truncate(), eye: eye as i64, radius: s.radius, team: s.team, see_through: s.see_through });
        }
        for (p, b) in world.query::<(&Position, &Blocker)>().iter() {
            let BlockerShape::Rect { size, yaw_degrees } = b.shape else { panic!("the judge takes rectangular walls") };
            assert!(yaw_degrees == 0.0, "the judge takes axis-aligned walls");
            let (lo, hi) = (p.0.truncate() - size / 2.0, p.0.truncate() + size / 2.0);
            let whole = |v: f32| {
                assert!(v.fract() == 0.0, "the judge takes walls on whole units, not {v}");
                v as i64
            };
            let top = b.height.map(|h| {
                let top = f64::from(p.0.z) + f64::from(h);
                assert!(top.fract() == 0.0, "the judge takes wall tops on whole units");
                top as i64
            });
            scene.walls.push(Wall { min: [whole(lo.x), whole(lo.y)], max: [whole(hi.x), whole(hi.y)], top });
        }
        for (p, a) in world.query::<(&Position, &AntiVision)>().iter() {
            assert!(a.falloff == 0.0, "the judge takes hard-edged anti-vision");
            scene.anti.push(Anti { at: p.0.truncate(), radius: a.radius, targets: a.targets });
        }
        scene
    }

    /// The top of texel `(x, y)`: `None` when uncovered, the highest wall
    /// over it otherwise (a wall nothing sees over is `i64::MAX`).
    fn top(&self, x: i64, y: i64) -> Option<i64> {
        self.walls.iter().filter(|w| (w.min[0]..w.max[0]).contains(&x) && (w.min[1]..w.max[1]).contains(&y)).map(|w| w.top.unwrap_or(i64::MAX)).max()
    }

    /// The ground a ray aims at on texel `(x, y)`: a covered texel's top,
    /// 0 elsewhere.
    fn ground(&self, x: i64, y: i64) -> i64 {
        match self.top(x, y) {
            // Above every eye: the same order as murk's wall height.
            Some(i64::MAX) => 1 << 16,
            Some(top) => top,
            None => 0,
        }
    }

    /// Whether texel `c` blocks the ray from `s` (eye `eye`) to `t`.
    fn blocks(&self, s: [i64; 2], t: [i64; 2], eye: i64, c: [i64; 2]) -> bool {
        let Some(top) = self.top(c[0], c[1]) else { return false };
        let top = if top == i64::MAX { 1 << 16 } else { top };
        let k = (c[0] - s[0]).abs().max((c[1] - s[1]).abs());
        let n = (t[0] - s[0]).abs().max((t[1] - s[1]).abs());
        (top - eye) * n > (self.ground(t[0], t[1]) - eye) * k
    }

    /// Whether nothing blocks the ray between the centres of `s` and `t`.
    fn clear(&self, s: [i64; 2], t: [i64; 2], eye: i64) -> bool {
        if s == t {
            return true;
        }
        // Doubled coordinates: centres are odd, texel edges even.
        let p = [2 * s[0] + 1, 2 * s[1] + 1];
        let d = [2 * (t[0] - s[0]), 2 * (t[1] - s[1])];
        let (x0, x1) = (s[0].min(t[0]), s[0].max(t[0]));
        let (y0, y1) = (s[1].min(t[1]), s[1].max(t[1]));
        for cx in x0..=x1 {
            // The rows the segment may reach in this column (a margin of a
            // row each way; the exact test below decides).
            let (ya, yb) = if d[0] == 0 {
                (y0, y1)
            } else {
                let y_at = |x: i64| {
                    let x = x.clamp(p[0].min(p[0] + d[0]), p[0].max(p[0] + d[0]));
                    (p[1] as f64 + (x - p[0]) as f64 * d[1] as f64 / d[0] as f64) / 2.0
                };
                let (a, b) = (y_at(2 * cx), y_at(2 * cx + 2));
                ((a.min(b).floor() as i64 - 1).max(y0), (a.max(b).floor() as i64 + 1).min(y1))
            };
            for cy in ya..=yb {
                let c = [cx, cy];
                if c == s || c == t {
                    continue;
                }
                if meets_open_square(p, d, c) && self.blocks(s, t, eye, c) {
                    return false;
                }
            }
        }
        // Corners of the grid the segment runs exactly through.
        if d[0] != 0 && d[1] != 0 {
            for i in x0 + 1..=x1 {
                // Where x = 2i: is y there an even whole number?
                let num = p[1] * d[0] + (2 * i - p[0]) * d[1];
                if num % d[0] != 0 {
                    continue;
                }
                let y = num / d[0];
                if y % 2 != 0 {
                    continue;
                }
                let j = y / 2;
                // The two texels that only touch the corner.
                let beside = if (d[0] > 0) == (d[1] > 0) { [[i, j - 1], [i - 1, j]] } else { [[i - 1, j - 1], [i, j]] };
                if beside.iter().all(|&c| self.blocks(s, t, eye, c)) {
                    return false;
                }
            }
        }
        true
    }

    /// Whether an eye of `teams` lights texel `t` (in range, ray clear).
    fn lit(&self, teams: TeamMask, t: [i64; 2]) -> bool {
        self.eyes.iter().filter(|e| teams.contains(e.team)).any(|e| {
            let (ex, ey, r) = (q3(e.at.x), q3(e.at.y), q3(e.radius));
            let (dx, dy) = (centre(t[0]) - ex, centre(t[1]) - ey);
            if dx * dx + dy * dy >= r * r {
                return false;
            }
            e.see_through || self.clear([ex >> 3, ey >> 3], t, e.eye)
        })
    }

    /// Whether texel `t` is in sight of `teams`: lit by an eye (a covered
    /// texel also when an uncovered neighbour is lit), outside every
    /// anti-vision area against them, or inside a sight reveal made for
    /// them.
    pub fn in_sight(&self, teams: TeamMask, t: [i64; 2]) -> bool {
        let revealed = self.reveals.iter().any(|(m, disc)| {
            let (dx, dy, r) = (centre(t[0]) - q3(disc.at.x), centre(t[1]) - q3(disc.at.y), q3(disc.radius));
            m.0 & teams.0 != 0 && dx * dx + dy * dy <= r * r
        });
        if revealed {
            return true;
        }
        let hidden = self.anti.iter().any(|a| {
            let (dx, dy, r) = (centre(t[0]) - q3(a.at.x), centre(t[1]) - q3(a.at.y), q3(a.radius));
            a.targets.0 & teams.0 != 0 && dx * dx + dy * dy < r * r
        });
        if hidden {
            return false;
        }
        if self.lit(teams, t) {
            return true;
        }
        // A covered texel shows what its uncovered 8-neighbours show.
        self.reveal_walls
            && self.top(t[0], t[1]).is_some()
            && (-1..=1).any(|dy| {
                (-1..=1).any(|dx| {
                    let n = [t[0] + dx, t[1] + dy];
                    (0..self.width).contains(&n[0]) && (0..self.height).contains(&n[1]) && self.top(n[0], n[1]).is_none() && self.lit(teams, n)
                })
            })
    }

    /// The texels of a footprint of radius `r` at `at`: centres within `r`
    /// (outline included) and the texel under the point, inside the grid.
    pub fn footprint(&self, at: Vec2, r: f32) -> Vec<[i64; 2]> {
        let (cx, cy, rq) = (q3(at.x), q3(at.y), q3(r));
        let mut texels = Vec::new();
        for y in 0..self.height {
            for x in 0..self.width {
                let (dx, dy) = (centre(x) - cx, centre(y) - cy);
                if dx * dx + dy * dy <= rq * rq {
                    texels.push([x, y]);
                }
            }
        }
        let inside = (0.0..=self.width as f32).contains(&at.x) && (0.0..=self.height as f32).contains(&at.y);
        if inside {
            let under = [(at.x.floor() as i64).min(self.width - 1), (at.y.floor() as i64).min(self.height - 1)];
            if !texels.contains(&under) {
                texels.push(under);
            }
        }
        texels
    }

    /// Whether `teams` see an entity with footprint `r` at `at`.
    pub fn sees(&self, teams: TeamMask, at: Vec2, r: f32) -> bool {
        self.footprint(at, r).into_iter().any(|t| self.in_sight(teams, t))
    }
}

/// Whether the open segment from `p` along `d` (doubled coordinates) meets
/// the open square of texel `c`.
fn meets_open_square(p: [i64; 2], d: [i64; 2], c: [i64; 2]) -> bool {
    // The segment's parameter lies in (lo, hi), as fractions num / den
    // with den > 0; it starts as (0, 1).
    let (mut lo, mut hi) = ((0i64, 1i64), (1i64, 1i64));
    for axis in 0..2 {
        let (edge0, edge1) = (2 * c[axis], 2 * c[axis] + 2);
        if d[axis] == 0 {
            if !(edge0 < p[axis] && p[axis] < edge1) {
                return false;
            }
            continue;
        }
        let (mut a, mut b) = ((edge0 - p[axis], d[axis]), (edge1 - p[axis], d[axis]));
        if b.1 < 0 {
            a = (-a.0, -a.1);
            b = (-b.0, -b.1);
        }
        let (enter, exit) = if d[axis] > 0 { (a, b) } else { (b, a) };
        if enter.0 * lo.1 > lo.0 * enter.1 {
            lo = enter;
        }
        if exit.0 * hi.1 < hi.0 * exit.1 {
            hi = exit;
        }
    }
    lo.0 * hi.1 < hi.0 * lo.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_between_hides_and_a_low_wall_hides_from_low_eyes_only() {
        let mut scene = Scene { width: 16, height: 16, reveal_walls: true, ..Scene::default() };
        scene.eyes.push(Eye { at: Vec2::new(2.5, 8.5), eye: 1, radius: 12.0, team: 0, see_through: false });
        let team = TeamMask::of(&[0]).unwrap();
        assert!(scene.in_sight(team, [10, 8]));
        scene.walls.push(Wall { min: [6, 0], max: [7, 16], top: Some(3) });
        assert!(!scene.in_sight(team, [10, 8]), "a low wall hides the ground behind it from a low eye");
        assert!(scene.in_sight(team, [6, 8]), "the wall's face is seen");
        scene.eyes[0].eye = 8;
        assert!(!scene.in_sight(team, [7, 8]), "right behind a low wall stays hidden from a tall eye");
        assert!(scene.in_sight(team, [12, 8]), "a tall eye sees the ground far behind a low wall");
        assert!(!scene.in_sight(TeamMask::of(&[1]).unwrap(), [3, 8]), "another team's eye lights nothing");
        scene.walls[0].top = None;
        assert!(!scene.in_sight(team, [12, 8]));
        scene.anti.push(Anti { at: Vec2::new(3.0, 8.0), radius: 2.0, targets: team });
        assert!(!scene.in_sight(team, [3, 8]), "anti-vision hides");
        scene.reveals.push((team, Disc { at: Vec2::new(12.5, 8.5), radius: 1.0 }));
        assert!(scene.in_sight(team, [12, 8]) && scene.in_sight(team, [13, 8]) && !scene.in_sight(team, [14, 8]));
    }

    #[test]
    fn the_segment_meets_the_squares_it_crosses_and_not_those_it_touches() {
        // From (0, 0) to (2, 2): through the centres' diagonal, touching
        // (1, 0) and (0, 1) at a corner only.
        let (p, d) = ([1, 1], [4, 4]);
        assert!(meets_open_square(p, d, [1, 1]));
        assert!(!meets_open_square(p, d, [1, 0]) && !meets_open_square(p, d, [0, 1]));
        // From (0, 0) to (3, 1): crosses (1, 0) and (2, 1), not (1, 1).
        let (p, d) = ([1, 1], [6, 2]);
        assert!(meets_open_square(p, d, [1, 0]) && meets_open_square(p, d, [2, 1]));
        assert!(!meets_open_square(p, d, [2, 0]) && !meets_open_square(p, d, [0, 1]));
    }
}
