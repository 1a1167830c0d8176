//! Which nodes meet in which round: perfect matchings by the circle method.
//!
//! Fix node 0, put the others on a circle and rotate it one step per round; in each round node 0 meets the
//! node opposite it and the rest pair up across the circle. Over `n - 1` rounds (n even) every pair meets
//! exactly once, so any `k` of those rounds give every node `k` distinct partners, and every node is busy in
//! every round. With an odd `n` a phantom node makes the count even: whoever meets it sits the round out, a
//! different node each round, so `k + 1` rounds give every node at least `k` partners.

/// Rounds of pairs (indices into the node list) so that each of `n` nodes meets at least `partners`
/// distinct others (all `n - 1` when there are fewer), no node twice in a round.
pub(super) fn rounds(n: usize, partners: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 || partners == 0 {
        return Vec::new();
    }
    let m = n + n % 2; // with the phantom
    let wanted = if n % 2 == 1 { partners + 1 } else { partners };
    let count = wanted.min(m - 1);
    let mut out = Vec::with_capacity(count);
    for r in 0..count {
        let mut pairs = Vec::with_capacity(m / 2);
        // positions 1..m on the circle, rotated by r
        let at = |pos: usize| 1 + (pos - 1 + r) % (m - 1);
        let opposite = at(m / 2);
        pairs.push((0, opposite));
        for i in 1..m / 2 {
            pairs.push((at(m / 2 - i), at(m / 2 + i)));
        }
        let phantom = n; // index n exists only when n is odd
        pairs.retain(|&(a, b)| a != phantom && b != phantom);
        for p in &mut pairs {
            if p.0 > p.1 {
                *p = (p.1, p.0);
            }
        }
        pairs.sort_unstable();
        out.push(pairs);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashMap};

    #[test]
    fn six_nodes_meet_three_partners_in_three_full_rounds() {
        let rounds = rounds(6, 3);
        assert_eq!(rounds.len(), 3);
        assert!(rounds.iter().all(|r| r.len() == 3)); // every node busy in every round
    }

    fn check(n: usize, k: usize) {
        let rounds = rounds(n, k);
        let mut met: HashMap<usize, BTreeSet<usize>> = HashMap::new();
        let mut all_pairs = BTreeSet::new();
        for round in &rounds {
            let mut busy = BTreeSet::new();
            for &(a, b) in round {
                assert!(a < n && b < n && a != b, "n={n}: bad pair {a},{b}");
                assert!(
                    busy.insert(a) && busy.insert(b),
                    "n={n}: a node twice in a round"
                );
                assert!(all_pairs.insert((a, b)), "n={n}: pair {a},{b} twice");
                met.entry(a).or_default().insert(b);
                met.entry(b).or_default().insert(a);
            }
            // every node busy, except one when n is odd
            assert_eq!(busy.len(), n - n % 2, "n={n}");
        }
        for node in 0..n {
            let got = met.get(&node).map_or(0, BTreeSet::len);
            assert!(got >= k.min(n - 1), "n={n} k={k}: node {node} met {got}");
        }
    }

    #[test]
    fn every_node_meets_k_distinct_partners() {
        for n in 2..40 {
            for k in 1..6 {
                check(n, k);
            }
        }
        check(1024, 3);
        check(1023, 3);
    }

    #[test]
    fn a_full_round_robin_when_k_is_large() {
        let r = rounds(8, 100);
        assert_eq!(r.len(), 7);
        assert_eq!(r.iter().map(Vec::len).sum::<usize>(), 8 * 7 / 2);
    }

    #[test]
    fn nothing_to_pair() {
        assert!(rounds(1, 3).is_empty());
        assert!(rounds(5, 0).is_empty());
    }
}
