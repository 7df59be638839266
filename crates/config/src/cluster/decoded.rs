//! What decoding a block writes: the fields it sets, under their snake_case names, in the order
//! written, as a tree the model's serde reads directly. A JSON object in between hashed and
//! allocated every key of every cluster, and its deserializer walked it again.

use serde::de::value::{Error, MapDeserializer, SeqDeserializer};
use serde::de::{self, Deserialize, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

/// One decoded value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decoded {
    /// Written, but set to nothing (an enum's unspecified value): the field reads as unset.
    Null,
    Bool(bool),
    Int(i64),
    String(String),
    List(Vec<Decoded>),
    /// A map of strings (`labels`, a Slurm `config`).
    StringMap(Vec<(String, String)>),
    Message(Fields),
}

/// The fields of a decoded message, each once, in the order they were first written.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Fields(Vec<(&'static str, Decoded)>);

impl Fields {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self(Vec::with_capacity(capacity))
    }

    /// Sets `name`; a field written again keeps its place and takes the new value.
    pub(crate) fn insert(&mut self, name: &'static str, value: Decoded) {
        match self.0.iter_mut().find(|(field, _)| *field == name) {
            Some((_, old)) => *old = value,
            None => self.0.push((name, value)),
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|(field, _)| *field == name)
    }

    /// Appends `element` to the list `name`, which it creates the first time.
    pub(crate) fn push_element(&mut self, name: &'static str, element: Decoded) {
        let position = match self.0.iter().position(|(field, _)| *field == name) {
            Some(position) => position,
            None => {
                self.0.push((name, Decoded::List(Vec::new())));
                self.0.len() - 1
            }
        };
        if let Decoded::List(items) = &mut self.0[position].1 {
            items.push(element);
        }
    }

    /// Reads the fields as a `T` (a cluster, a fallback's fields) through `T`'s serde.
    pub(crate) fn read<T: for<'de> Deserialize<'de>>(self) -> Result<T, Error> {
        T::deserialize(Decoded::Message(self))
    }
}

impl<'de> de::Deserializer<'de> for Decoded {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Self::Null => visitor.visit_unit(),
            Self::Bool(value) => visitor.visit_bool(value),
            Self::Int(value) => visitor.visit_i64(value),
            Self::String(value) => visitor.visit_string(value),
            Self::List(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Self::StringMap(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            Self::Message(Fields(fields)) => {
                let mut map = MapDeserializer::new(fields.into_iter());
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Self::Null => visitor.visit_none(),
            value => visitor.visit_some(value),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Self::String(variant) => visitor.visit_enum(variant.into_deserializer()),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl IntoDeserializer<'_, Error> for Decoded {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::Cluster;

    use super::*;

    fn message(fields: Vec<(&'static str, Decoded)>) -> Decoded {
        Decoded::Message(Fields(fields))
    }

    fn text(value: &str) -> Decoded {
        Decoded::String(value.to_owned())
    }

    #[test]
    fn a_cluster_reads_from_its_snake_case_fields_as_from_json() {
        let pool = message(vec![
            ("id", text("cpu")),
            (
                "machine_spec",
                message(vec![("machine_type", text("n2-standard-8"))]),
            ),
            (
                "scaling_spec",
                message(vec![
                    ("min_node_count", Decoded::Int(0)),
                    ("max_node_count", Decoded::Int(4)),
                ]),
            ),
            ("enable_public_ips", Decoded::Bool(true)),
            ("provisioning_model", Decoded::Null),
        ]);
        let mut fields = Fields::with_capacity(3);
        fields.insert("display_name", text("first"));
        fields.insert(
            "labels",
            Decoded::StringMap(vec![("team".to_owned(), "ml".to_owned())]),
        );
        fields.push_element("node_pools", pool);
        fields.insert("display_name", text("Train"));
        let cluster: Cluster = fields.read().unwrap();
        let json = serde_json::json!({
            "display_name": "Train",
            "labels": {"team": "ml"},
            "node_pools": [{
                "id": "cpu",
                "machine_spec": {"machine_type": "n2-standard-8"},
                "scaling_spec": {"min_node_count": 0, "max_node_count": 4},
                "enable_public_ips": true,
                "provisioning_model": null,
            }],
        });
        assert_eq!(cluster, serde_json::from_value::<Cluster>(json).unwrap());
    }

    #[test]
    fn a_field_written_again_keeps_its_place() {
        let mut fields = Fields::default();
        fields.insert("a", Decoded::Int(1));
        fields.insert("b", Decoded::Int(2));
        fields.insert("a", Decoded::Int(3));
        assert_eq!(
            fields,
            Fields(vec![("a", Decoded::Int(3)), ("b", Decoded::Int(2))])
        );
        assert!(fields.contains("b"));
        assert!(!fields.contains("c"));
    }

    #[test]
    fn a_value_of_the_wrong_shape_is_an_error_not_a_default() {
        let fields = Fields(vec![("node_pools", text("cpu"))]);
        let error = fields.read::<Cluster>().unwrap_err();
        assert!(error.to_string().contains("invalid type"), "{error}");
    }
}
