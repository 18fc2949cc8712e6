//! Sets of registers for the compile-time analyses (`issue`, `uniformity`, `block_shift`): the
//! registers a loop writes, the ones that vary between lanes, the ones assigned only in
//! straight-line code.
//!
//! A set is a sorted list searched by bisection, and a map (`RegMap`: what a loop's induction
//! registers step by, what value the block-shift analysis knows a register holds) a sorted list of
//! pairs. The analyses run once per kernel over a few
//! hundred registers at most, where the list is as quick as a hash set, and the page's module
//! then carries no hash table's code (`hashbrown`, some 2 KB of WebAssembly per element type) for
//! them. Nothing reads a set's order except `iter`, whose callers only collect or look up.

use crate::ir::Reg;

/// A set of registers, kept sorted and without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegSet {
    sorted: Vec<Reg>,
}

impl RegSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `reg` is in the set.
    pub fn contains(&self, reg: &Reg) -> bool {
        self.sorted.binary_search(reg).is_ok()
    }

    /// Adds `reg`; true when it was not in the set before, as `HashSet::insert` answers.
    pub fn insert(&mut self, reg: Reg) -> bool {
        match self.sorted.binary_search(&reg) {
            Ok(_) => false,
            Err(at) => {
                self.sorted.insert(at, reg);
                true
            }
        }
    }

    /// Takes `reg` out; true when it was in the set.
    pub fn remove(&mut self, reg: &Reg) -> bool {
        match self.sorted.binary_search(reg) {
            Ok(at) => {
                self.sorted.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// The registers, in ascending order.
    pub fn iter(&self) -> std::slice::Iter<'_, Reg> {
        self.sorted.iter()
    }

    /// How many registers the set holds.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether the set holds no register.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

impl Extend<Reg> for RegSet {
    fn extend<I: IntoIterator<Item = Reg>>(&mut self, regs: I) {
        for reg in regs {
            self.insert(reg);
        }
    }
}

impl FromIterator<Reg> for RegSet {
    fn from_iter<I: IntoIterator<Item = Reg>>(regs: I) -> Self {
        let mut set = RegSet::new();
        set.extend(regs);
        set
    }
}

impl<'a> IntoIterator for &'a RegSet {
    type Item = &'a Reg;
    type IntoIter = std::slice::Iter<'a, Reg>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Values by register, kept sorted by register, one value for each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegMap<V> {
    sorted: Vec<(Reg, V)>,
}

impl<V> Default for RegMap<V> {
    fn default() -> Self {
        RegMap { sorted: Vec::new() }
    }
}

impl<V> RegMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `reg` is, or where it would go.
    fn search(&self, reg: Reg) -> Result<usize, usize> {
        self.sorted.binary_search_by_key(&reg, |&(key, _)| key)
    }

    /// The value of `reg`, if it has one.
    pub fn get(&self, reg: &Reg) -> Option<&V> {
        self.search(*reg).ok().map(|at| &self.sorted[at].1)
    }

    /// Whether `reg` has a value.
    pub fn contains_key(&self, reg: &Reg) -> bool {
        self.search(*reg).is_ok()
    }

    /// Gives `reg` the value `value`, replacing the one it had.
    pub fn insert(&mut self, reg: Reg, value: V) {
        match self.search(reg) {
            Ok(at) => self.sorted[at].1 = value,
            Err(at) => self.sorted.insert(at, (reg, value)),
        }
    }

    /// The value of `reg`, given `value` first if it had none, as `entry(reg).or_insert(value)`.
    pub fn get_or_insert(&mut self, reg: Reg, value: V) -> &mut V {
        let at = match self.search(reg) {
            Ok(at) => at,
            Err(at) => {
                self.sorted.insert(at, (reg, value));
                at
            }
        };
        &mut self.sorted[at].1
    }

    /// Takes `reg`'s value away, if it has one.
    pub fn remove(&mut self, reg: &Reg) {
        if let Ok(at) = self.search(*reg) {
            self.sorted.remove(at);
        }
    }

    /// The values, in the order of their registers.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.sorted.iter().map(|(_, value)| value)
    }

    /// The registers and their values, in the order of the registers.
    pub fn into_pairs(self) -> Vec<(Reg, V)> {
        self.sorted
    }
}

impl<V> FromIterator<(Reg, V)> for RegMap<V> {
    fn from_iter<I: IntoIterator<Item = (Reg, V)>>(pairs: I) -> Self {
        let mut map = RegMap::new();
        for (reg, value) in pairs {
            map.insert(reg, value);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::{RegMap, RegSet};

    #[test]
    fn a_map_keeps_one_value_per_register_the_latest_given() {
        let mut map = RegMap::new();
        map.insert(9, "nine");
        map.insert(2, "two");
        map.insert(9, "ix");
        *map.get_or_insert(5, "five") = "V";
        assert_eq!(*map.get_or_insert(2, "not two"), "two");
        map.remove(&2);
        assert_eq!(map.into_pairs(), vec![(5, "V"), (9, "ix")]);
    }

    #[test]
    fn registers_inserted_out_of_order_are_held_once_in_ascending_order() {
        let set: RegSet = [7, 3, 7, 5, 3].into_iter().collect();
        assert_eq!(set.iter().copied().collect::<Vec<_>>(), vec![3, 5, 7]);
        assert_eq!(set.len(), 3);
    }

    #[test]
    fn insert_and_remove_answer_whether_the_set_changed() {
        let mut set = RegSet::new();
        assert!(set.insert(4));
        assert!(!set.insert(4));
        assert!(set.contains(&4));
        assert!(!set.remove(&9));
        assert!(set.remove(&4));
        assert!(set.is_empty());
    }
}
