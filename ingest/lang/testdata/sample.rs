//! Crate docs.
use std::fmt;

/// A point.
#[derive(Debug, Clone)]
pub struct Point<T> {
    x: T,
    y: T,
}

pub const ORIGIN: i32 = 0;

/// Things that draw.
pub trait Draw {
    fn draw(&self) -> String;
    fn name(&self) -> &str {
        "draw"
    }
}

impl<T: fmt::Display> fmt::Display for Point<T> {
    /// Formats it.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

impl<T> Point<T> {
    pub fn new(x: T, y: T) -> Self {
        Point { x, y }
    }
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

pub enum Shape {
    Circle(f64),
    Square(f64),
}

mod inner {
    pub fn helper() -> i32 {
        super::compute(1)
    }
}

type Pair = (i32, i32);

fn main() {
    let p = Point::new(1, 2);
    println!("{}", p);
}
