//! Maps from a name in the kernel's source to what it stands for: the preprocessor's macros and
//! the semantic check's scopes, globals and functions.
//!
//! They hold a few to a few hundred entries and are filled once per kernel, so a list searched
//! from its end does as well as a hash table for them. The page's module carries a copy of the
//! hash table's code (`hashbrown`, some 2 KB of WebAssembly) for every key and value type used
//! with it; a list of pairs needs only its short search loop. No map here is iterated, so the
//! order of the entries is never seen: each name is in the list at most once, as in a hash map.

/// Names and their values; a name appears at most once.
#[derive(Clone, Debug)]
pub struct NameMap<V> {
    entries: Vec<(String, V)>,
}

impl<V> Default for NameMap<V> {
    fn default() -> Self {
        NameMap {
            entries: Vec::new(),
        }
    }
}

impl<V> NameMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `name` is in the list, searched from the end, where the latest entries are.
    fn position(&self, name: &str) -> Option<usize> {
        self.entries.iter().rposition(|(key, _)| key == name)
    }

    /// The value of `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<&V> {
        self.position(name).map(|at| &self.entries[at].1)
    }

    /// Whether `name` has a value.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Gives `name` the value `value`, replacing the value it had, as `HashMap::insert` does.
    pub fn insert(&mut self, name: String, value: V) {
        match self.position(&name) {
            Some(at) => self.entries[at].1 = value,
            None => self.entries.push((name, value)),
        }
    }

    /// Takes `name`'s value away, if it has one.
    pub fn remove(&mut self, name: &str) {
        if let Some(at) = self.position(name) {
            self.entries.remove(at);
        }
    }

    /// How many names have a value.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no name has a value.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<V> FromIterator<(String, V)> for NameMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(pairs: I) -> Self {
        let mut map = NameMap::new();
        for (name, value) in pairs {
            map.insert(name, value);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::NameMap;

    #[test]
    fn a_second_insert_of_a_name_replaces_its_value_and_keeps_one_entry() {
        let mut map = NameMap::new();
        map.insert("n".to_string(), 1);
        map.insert("m".to_string(), 2);
        map.insert("n".to_string(), 3);
        assert_eq!(map.get("n"), Some(&3));
        assert_eq!(map.get("m"), Some(&2));
        assert_eq!(map.len(), 2);
    }

    #[test]
    fn a_removed_name_has_no_value_and_the_others_keep_theirs() {
        let mut map = NameMap::new();
        map.insert("N".to_string(), 16);
        map.insert("M".to_string(), 32);
        map.remove("N");
        map.remove("K");
        assert!(!map.contains_key("N"));
        assert_eq!(map.get("M"), Some(&32));
        assert_eq!(map.len(), 1);
        assert!(!map.is_empty());
    }
}
