//! [`Area`]: a box of screen pixels, as X DAMAGE reports what was drawn
//! and as a grab re-reads it; and [`Drawn`]: what changed between two
//! grabs, for the work that redoes only that part (hashes, shaping).

use x11rb::protocol::xproto::Rectangle;

/// A box of pixels, `x..x + width` by `y..y + height`; empty when either
/// side is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Area {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl Area {
    /// A whole `width` x `height` screen.
    pub fn whole(width: u32, height: u32) -> Area {
        Area {
            x: 0,
            y: 0,
            width,
            height,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    pub fn right(&self) -> u32 {
        self.x + self.width
    }

    pub fn bottom(&self) -> u32 {
        self.y + self.height
    }

    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// The smallest box holding both (an empty one adds nothing).
    pub fn union(self, other: Area) -> Area {
        if self.is_empty() {
            return other;
        }
        if other.is_empty() {
            return self;
        }
        let (x, y) = (self.x.min(other.x), self.y.min(other.y));
        Area {
            x,
            y,
            width: self.right().max(other.right()) - x,
            height: self.bottom().max(other.bottom()) - y,
        }
    }

    /// The part in both; empty when they do not meet.
    pub fn intersect(self, other: Area) -> Area {
        let (x, y) = (self.x.max(other.x), self.y.max(other.y));
        let (right, bottom) = (
            self.right().min(other.right()),
            self.bottom().min(other.bottom()),
        );
        if right <= x || bottom <= y {
            return Area::default();
        }
        Area {
            x,
            y,
            width: right - x,
            height: bottom - y,
        }
    }

    /// An X rectangle clipped to a `width` x `height` screen.
    pub fn of_rectangle(r: &Rectangle, width: u32, height: u32) -> Area {
        let clip = |start: i16, len: u16, limit: u32| {
            let start = i64::from(start);
            let end = (start + i64::from(len)).clamp(0, i64::from(limit));
            let start = start.clamp(0, end);
            (start as u32, (end - start) as u32)
        };
        let (x, w) = clip(r.x, r.width, width);
        let (y, h) = clip(r.y, r.height, height);
        Area {
            x,
            y,
            width: w,
            height: h,
        }
    }
}

/// What was drawn between an earlier grab and the latest one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawn {
    /// Nothing: the screen is as it was.
    Nothing,
    /// Only pixels within this box may differ.
    Within(Area),
    /// Not known (the earlier grab is too old, the screen was resized, or
    /// a grab read it whole): anything may differ.
    Unknown,
}

/// The most areas one grab reads one by one; more are read as the one box
/// around them (a terminal's redraw is hundreds of glyph boxes).
pub const MAX_AREAS_READ: usize = 8;
/// Above this share of the screen, a grab reads the whole screen in one
/// request rather than boxes of it.
const WHOLE_ABOVE: f64 = 0.6;

/// The boxes a grab reads for the `drawn` rectangles on a `width` x
/// `height` screen: each of a few, the box around many, or the whole
/// screen when they cover most of it.
pub fn areas_to_read(drawn: &[Rectangle], width: u32, height: u32) -> Vec<Area> {
    let mut areas: Vec<Area> = drawn
        .iter()
        .map(|r| Area::of_rectangle(r, width, height))
        .filter(|a| !a.is_empty())
        .collect();
    if areas.len() > MAX_AREAS_READ {
        let around = areas.iter().fold(Area::default(), |acc, a| acc.union(*a));
        areas = vec![around];
    }
    let covered: u64 = areas.iter().map(Area::pixels).sum();
    if covered as f64 > WHOLE_ABOVE * Area::whole(width, height).pixels() as f64 {
        return vec![Area::whole(width, height)];
    }
    areas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: i16, y: i16, width: u16, height: u16) -> Rectangle {
        Rectangle {
            x,
            y,
            width,
            height,
        }
    }

    fn area(x: u32, y: u32, width: u32, height: u32) -> Area {
        Area {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn rectangles_are_clipped_to_the_screen() {
        assert_eq!(
            Area::of_rectangle(&rect(-5, 790, 10, 50), 1280, 800),
            area(0, 790, 5, 10)
        );
        assert!(Area::of_rectangle(&rect(0, 900, 10, 50), 1280, 800).is_empty());
        assert!(Area::of_rectangle(&rect(-20, 0, 10, 5), 1280, 800).is_empty());
    }

    #[test]
    fn unions_and_intersections() {
        let a = area(10, 10, 10, 10);
        let b = area(15, 30, 10, 5);
        assert_eq!(a.union(b), area(10, 10, 15, 25));
        assert_eq!(a.union(Area::default()), a);
        assert_eq!(a.intersect(area(15, 15, 100, 100)), area(15, 15, 5, 5));
        assert!(a.intersect(b).is_empty());
    }

    #[test]
    fn few_boxes_are_read_each_many_as_one_and_most_of_the_screen_whole() {
        let few = [
            rect(0, 0, 10, 10),
            rect(100, 100, 5, 5),
            rect(7, 300, 0, 10),
        ];
        assert_eq!(
            areas_to_read(&few, 1280, 800),
            vec![area(0, 0, 10, 10), area(100, 100, 5, 5)]
        );
        let many: Vec<Rectangle> = (0..20).map(|i| rect(i * 10, i * 3, 8, 2)).collect();
        assert_eq!(areas_to_read(&many, 1280, 800), vec![area(0, 0, 198, 59)]);
        let most = [rect(0, 0, 1280, 700)];
        assert_eq!(areas_to_read(&most, 1280, 800), vec![area(0, 0, 1280, 800)]);
        assert!(areas_to_read(&[], 1280, 800).is_empty());
    }
}
