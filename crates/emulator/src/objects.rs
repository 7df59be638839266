//! The emulated Cloud Storage data: buckets, their objects (content, content type, generation)
//! and the generation counter, persisted with the rest of the store. Generations are int64,
//! strictly increasing over the whole store (so a deleted and re-created object never gets a
//! generation it had before), taken from the clock in microseconds as Google's are. Every write
//! and delete may carry an `ifGenerationMatch` precondition, checked here under the
//! emulator's lock, so two writers racing on one object can never both win.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::clock::Millis;

/// What the object store can refuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ObjectError {
    NoSuchBucket,
    NoSuchObject,
    ConditionNotMet,
}

/// Every bucket and the generation counter.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ObjectStore {
    pub(crate) buckets: BTreeMap<String, Bucket>,
    pub(crate) last_generation: i64,
}

/// One bucket's objects by name.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Bucket {
    pub(crate) objects: BTreeMap<String, StoredObject>,
}

/// The live version of an object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoredObject {
    pub(crate) generation: i64,
    pub(crate) content_type: String,
    /// The content, hex-encoded in the state file so that any bytes survive JSON.
    #[serde(with = "hex_bytes")]
    pub(crate) content: Vec<u8>,
    /// When this generation was written.
    pub(crate) written_at: Millis,
}

/// A write of one object.
#[derive(Debug)]
pub(crate) struct ObjectWrite {
    pub(crate) content: Vec<u8>,
    pub(crate) content_type: String,
    pub(crate) if_generation_match: Option<i64>,
    pub(crate) now: Millis,
}

impl ObjectStore {
    /// Creates `bucket` if it does not exist yet; answers whether it was created.
    pub(crate) fn create_bucket(&mut self, bucket: &str) -> bool {
        if self.buckets.contains_key(bucket) {
            return false;
        }
        self.buckets.insert(bucket.to_owned(), Bucket::default());
        true
    }

    /// The live object, if its generation satisfies `if_generation_match`.
    pub(crate) fn get(
        &self,
        bucket: &str,
        object: &str,
        if_generation_match: Option<i64>,
    ) -> Result<&StoredObject, ObjectError> {
        let stored = self
            .bucket(bucket)?
            .objects
            .get(object)
            .ok_or(ObjectError::NoSuchObject)?;
        check_precondition(Some(stored), if_generation_match)?;
        Ok(stored)
    }

    /// Writes a new generation of `object` if the precondition holds (`Some(0)`: only if it
    /// does not exist; `Some(g)`: only if its live generation is `g`).
    pub(crate) fn put(
        &mut self,
        bucket: &str,
        object: &str,
        write: ObjectWrite,
    ) -> Result<&StoredObject, ObjectError> {
        let existing = self.bucket(bucket)?.objects.get(object);
        check_precondition(existing, write.if_generation_match)?;
        let generation = self.next_generation(write.now);
        let stored = StoredObject {
            generation,
            content_type: write.content_type,
            content: write.content,
            written_at: write.now,
        };
        let objects = &mut self.bucket_mut(bucket)?.objects;
        objects.insert(object.to_owned(), stored);
        objects.get(object).ok_or(ObjectError::NoSuchObject)
    }

    /// Deletes `object` if its live generation satisfies `if_generation_match`.
    pub(crate) fn delete(
        &mut self,
        bucket: &str,
        object: &str,
        if_generation_match: Option<i64>,
    ) -> Result<(), ObjectError> {
        self.get(bucket, object, if_generation_match)?;
        self.bucket_mut(bucket)?.objects.remove(object);
        Ok(())
    }

    fn bucket(&self, bucket: &str) -> Result<&Bucket, ObjectError> {
        self.buckets.get(bucket).ok_or(ObjectError::NoSuchBucket)
    }

    fn bucket_mut(&mut self, bucket: &str) -> Result<&mut Bucket, ObjectError> {
        self.buckets
            .get_mut(bucket)
            .ok_or(ObjectError::NoSuchBucket)
    }

    /// The clock in microseconds, or one more than the last generation if the clock has not
    /// moved past it (two writes in one microsecond, or a clock set back after a restart).
    fn next_generation(&mut self, now: Millis) -> i64 {
        let generation = now
            .saturating_mul(1_000)
            .max(self.last_generation.saturating_add(1));
        self.last_generation = generation;
        generation
    }
}

/// `ifGenerationMatch`: absent always holds, `0` holds for a missing object, any other value
/// for a live object of exactly that generation.
fn check_precondition(
    existing: Option<&StoredObject>,
    if_generation_match: Option<i64>,
) -> Result<(), ObjectError> {
    let holds = match (if_generation_match, existing) {
        (None, _) => true,
        (Some(0), existing) => existing.is_none(),
        (Some(wanted), Some(stored)) => stored.generation == wanted,
        (Some(_), None) => false,
    };
    if holds {
        Ok(())
    } else {
        Err(ObjectError::ConditionNotMet)
    }
}

/// Bytes as a lowercase hex string in JSON.
mod hex_bytes {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        let text: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        serializer.serialize_str(&text)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        if !text.len().is_multiple_of(2) || !text.is_ascii() {
            return Err(D::Error::custom("object content is not hex"));
        }
        (0..text.len())
            .step_by(2)
            .map(|start| u8::from_str_radix(&text[start..start + 2], 16))
            .collect::<Result<_, _>>()
            .map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(content: &str, if_generation_match: Option<i64>, now: Millis) -> ObjectWrite {
        ObjectWrite {
            content: content.as_bytes().to_vec(),
            content_type: "application/json".to_owned(),
            if_generation_match,
            now,
        }
    }

    fn store_with_bucket() -> ObjectStore {
        let mut store = ObjectStore::default();
        assert!(store.create_bucket("b"));
        assert!(!store.create_bucket("b"));
        store
    }

    #[test]
    fn generations_increase_even_when_the_clock_does_not() {
        let mut store = store_with_bucket();
        let first = store
            .put("b", "o", write("1", Some(0), 5))
            .unwrap()
            .generation;
        let second = store.put("b", "o", write("2", None, 5)).unwrap().generation;
        store.delete("b", "o", Some(second)).unwrap();
        let third = store
            .put("b", "o", write("3", Some(0), 4))
            .unwrap()
            .generation;
        assert_eq!(first, 5_000);
        assert!(first < second && second < third, "{first} {second} {third}");
    }

    #[test]
    fn preconditions_hold_only_for_the_live_generation() {
        let mut store = store_with_bucket();
        assert_eq!(
            store.put("b", "o", write("x", Some(7), 1)).unwrap_err(),
            ObjectError::ConditionNotMet
        );
        let live = store
            .put("b", "o", write("x", Some(0), 1))
            .unwrap()
            .generation;
        assert_eq!(
            store.put("b", "o", write("y", Some(0), 2)).unwrap_err(),
            ObjectError::ConditionNotMet
        );
        assert_eq!(
            store.get("b", "o", Some(live + 1)).unwrap_err(),
            ObjectError::ConditionNotMet
        );
        assert_eq!(
            store.delete("b", "o", Some(live - 1)).unwrap_err(),
            ObjectError::ConditionNotMet
        );
        assert_eq!(store.get("b", "o", Some(live)).unwrap().content, b"x");
        assert_eq!(
            store.delete("b", "nope", None),
            Err(ObjectError::NoSuchObject)
        );
        assert_eq!(
            store.get("other", "o", None).unwrap_err(),
            ObjectError::NoSuchBucket
        );
    }

    #[test]
    fn content_survives_the_state_file_as_hex() {
        let mut store = store_with_bucket();
        store.put("b", "o", write("\u{0}é{", None, 1)).unwrap();
        let json = serde_json::to_string(&store).unwrap();
        assert!(json.contains("\"content\":\"00c3a97b\""), "{json}");
        let back: ObjectStore = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back.get("b", "o", None).unwrap().content,
            "\u{0}é{".as_bytes()
        );
    }
}
