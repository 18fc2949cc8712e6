//! Stable sorts of short lists through one sort of indices, so that a program carries one copy of
//! the sorting code whatever it sorts.
//!
//! `slice::sort_by_key` is generic over the element, the key and the closure: every call site
//! compiles its own copy of the standard library's sort (driftsort and its small-sort networks,
//! some 4 KB of WebAssembly each), and the page's module carried sixteen of them. Here the sort
//! runs on indices, comparing through a `dyn` reference, and the elements are then moved into
//! place by swaps, also through a `dyn` reference: the only code made per call site is two small
//! closures. The result is exactly `slice::sort_by`'s: a stable sort, equal elements in their
//! first order.
//!
//! It is meant for the short lists of compiling and reporting (a kernel's declarations, accesses,
//! objects, a lesson list). Hot loops over plain numbers keep `sort_unstable`, whose copy for
//! `u64` is shared by all of them.

use std::cmp::Ordering;

/// Sorts `items` stably by `compare`, as `items.sort_by(compare)` does.
pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let order = stable_order(items.len(), &|a, b| compare(&items[a], &items[b]));
    move_into_order(order, &mut |a, b| items.swap(a, b));
}

/// Sorts `items` stably by `key`, as `items.sort_by_key(key)` does.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// The distinct items in ascending order, as collecting them into a `BTreeSet` gives them, without
/// a copy of the B-tree's code for each element type.
pub fn sorted_distinct<T: Ord>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.into_iter().collect();
    sort_by(&mut items, Ord::cmp);
    items.dedup();
    items
}

/// The indices `0..len` in the stable order of `compare`: element `order[i]` goes to place `i`.
/// Never inlined: a copy inlined into a caller would carry its own copy of the sort.
#[inline(never)]
fn stable_order(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// Moves each element to its place in `order` with `swap`: each swap puts one element where it
/// belongs, so there are fewer swaps than elements.
#[inline(never)]
fn move_into_order(order: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    // `destination[k]` is where the element now at `k` belongs.
    let mut destination = vec![0; order.len()];
    for (place, &element) in order.iter().enumerate() {
        destination[element] = place;
    }
    for place in 0..destination.len() {
        while destination[place] != place {
            let target = destination[place];
            swap(place, target);
            destination.swap(place, target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{sort_by, sort_by_key, sorted_distinct};
    use proptest::prelude::*;

    #[test]
    fn equal_keys_keep_their_first_order() {
        let mut words = vec![("b", 1), ("a", 2), ("c", 1), ("d", 0), ("e", 2)];
        sort_by_key(&mut words, |&(_, key)| key);
        assert_eq!(words, [("d", 0), ("b", 1), ("c", 1), ("a", 2), ("e", 2)]);
    }

    #[test]
    fn a_comparison_that_reverses_sorts_in_descending_order() {
        let mut shares = vec![0.25, 0.5, 0.125, 1.0];
        sort_by(&mut shares, |a: &f64, b| b.total_cmp(a));
        assert_eq!(shares, [1.0, 0.5, 0.25, 0.125]);
    }

    #[test]
    fn distinct_items_come_out_in_ascending_order_once_each() {
        assert_eq!(sorted_distinct([5, 1, 5, 3, 1, 9]), [1, 3, 5, 9]);
        assert!(sorted_distinct(Vec::<u32>::new()).is_empty());
    }

    #[test]
    fn empty_and_single_lists_stay_as_they_are() {
        let mut empty: Vec<u8> = Vec::new();
        sort_by_key(&mut empty, |&x| x);
        assert!(empty.is_empty());
        let mut one = vec![7];
        sort_by_key(&mut one, |&x| x);
        assert_eq!(one, [7]);
    }

    proptest! {
        #[test]
        fn the_order_is_the_standard_stable_sorts(
            items in proptest::collection::vec((0u8..6, any::<u16>()), 0..200),
        ) {
            let mut ours = items.clone();
            sort_by_key(&mut ours, |&(key, _)| key);
            let mut standard = items;
            standard.sort_by_key(|&(key, _)| key);
            prop_assert_eq!(ours, standard);
        }
    }
}
