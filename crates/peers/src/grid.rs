//! The Figure-13 experiments' `news` pattern: each member's neighbours on a torus.

/// The neighbours of member `me` of `p` (north, east, south, west on the most square torus
/// grid of `p` members, duplicates and `me` itself dropped). Symmetric: each neighbour has
/// `me` among its own.
pub fn torus_neighbours(me: usize, p: usize) -> Vec<usize> {
    let cols = (1..=p)
        .filter(|c| p % c == 0 && c * c <= p)
        .max()
        .map_or(p, |c| p / c);
    let rows = p / cols;
    let (r, c) = (me / cols, me % cols);
    let mut v = Vec::new();
    for (dr, dc) in [(rows - 1, 0), (0, 1), (1, 0), (0, cols - 1)] {
        let q = ((r + dr) % rows) * cols + (c + dc) % cols;
        if q != me && !v.contains(&q) {
            v.push(q);
        }
    }
    v
}
