//! Control records (batches with the control attribute): their key is `version int16 = 0` +
//! `type int16`; an end transaction marker (type 0 ABORT, 1 COMMIT) has the value
//! `version int16 = 0` + `coordinatorEpoch int32`. Parsing follows Kafka's `ControlRecordType.parse`
//! and `EndTransactionMarker.deserializeValue`: at least 4 (key) / 6 (value) bytes, a
//! non-negative version, extra bytes allowed (later versions may add fields).
use crate::error::RecordError;

pub const CONTROL_RECORD_KEY_VERSION: i16 = 0;
pub const END_TXN_MARKER_VALUE_VERSION: i16 = 0;
pub const CONTROL_RECORD_KEY_SIZE: usize = 4;
pub const END_TXN_MARKER_VALUE_SIZE: usize = 6;

/// Kafka's `ControlRecordType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KraftVersion,
    KraftVoters,
    Unknown(i16),
}

impl ControlRecordType {
    pub fn type_id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KraftVersion => 5,
            ControlRecordType::KraftVoters => 6,
            ControlRecordType::Unknown(id) => id,
        }
    }

    pub fn from_type_id(id: i16) -> ControlRecordType {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KraftVersion,
            6 => ControlRecordType::KraftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    /// The type named by a control record's key.
    pub fn parse_key(key: &[u8]) -> Result<ControlRecordType, RecordError> {
        if key.len() < CONTROL_RECORD_KEY_SIZE {
            return Err(RecordError::InvalidRecord(format!(
                "control record key needs {CONTROL_RECORD_KEY_SIZE} bytes, found {}",
                key.len()
            )));
        }
        let version = i16::from_be_bytes([key[0], key[1]]);
        if version < 0 {
            return Err(RecordError::InvalidRecord(format!(
                "invalid control record key version {version}"
            )));
        }
        Ok(ControlRecordType::from_type_id(i16::from_be_bytes([
            key[2], key[3],
        ])))
    }

    /// The key of a control record of this type.
    pub fn key(self) -> [u8; CONTROL_RECORD_KEY_SIZE] {
        let mut key = [0u8; CONTROL_RECORD_KEY_SIZE];
        key[..2].copy_from_slice(&CONTROL_RECORD_KEY_VERSION.to_be_bytes());
        key[2..].copy_from_slice(&self.type_id().to_be_bytes());
        key
    }
}

/// A transaction's end (Kafka's `EndTransactionMarker`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndTransactionMarker {
    /// `Commit` or `Abort`.
    pub control_type: ControlRecordType,
    pub coordinator_epoch: i32,
}

impl EndTransactionMarker {
    pub fn commit(coordinator_epoch: i32) -> EndTransactionMarker {
        EndTransactionMarker {
            control_type: ControlRecordType::Commit,
            coordinator_epoch,
        }
    }

    pub fn abort(coordinator_epoch: i32) -> EndTransactionMarker {
        EndTransactionMarker {
            control_type: ControlRecordType::Abort,
            coordinator_epoch,
        }
    }

    pub fn key(&self) -> [u8; CONTROL_RECORD_KEY_SIZE] {
        self.control_type.key()
    }

    pub fn value(&self) -> [u8; END_TXN_MARKER_VALUE_SIZE] {
        let mut value = [0u8; END_TXN_MARKER_VALUE_SIZE];
        value[..2].copy_from_slice(&END_TXN_MARKER_VALUE_VERSION.to_be_bytes());
        value[2..].copy_from_slice(&self.coordinator_epoch.to_be_bytes());
        value
    }

    /// The marker held by a control record's key and value; other control types are refused.
    pub fn parse(key: &[u8], value: Option<&[u8]>) -> Result<EndTransactionMarker, RecordError> {
        let control_type = ControlRecordType::parse_key(key)?;
        if !matches!(
            control_type,
            ControlRecordType::Commit | ControlRecordType::Abort
        ) {
            return Err(RecordError::InvalidRecord(format!(
                "control record type {} is not an end transaction marker",
                control_type.type_id()
            )));
        }
        let value = value.unwrap_or(&[]);
        if value.len() < END_TXN_MARKER_VALUE_SIZE {
            return Err(RecordError::InvalidRecord(format!(
                "end transaction marker value needs {END_TXN_MARKER_VALUE_SIZE} bytes, found {}",
                value.len()
            )));
        }
        let version = i16::from_be_bytes([value[0], value[1]]);
        if version < 0 {
            return Err(RecordError::InvalidRecord(format!(
                "invalid end transaction marker version {version}"
            )));
        }
        let coordinator_epoch = i32::from_be_bytes([value[2], value[3], value[4], value[5]]);
        Ok(EndTransactionMarker {
            control_type,
            coordinator_epoch,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_marker_bytes_match_kafka() {
        let m = EndTransactionMarker::commit(7);
        assert_eq!(m.key(), [0, 0, 0, 1]);
        assert_eq!(m.value(), [0, 0, 0, 0, 0, 7]);
        assert_eq!(
            EndTransactionMarker::parse(&m.key(), Some(&m.value())).unwrap(),
            m
        );
        assert_eq!(EndTransactionMarker::abort(0).key(), [0, 0, 0, 0]);
    }

    #[test]
    fn short_or_negative_version_control_keys_are_invalid() {
        assert!(ControlRecordType::parse_key(&[0, 0, 1]).is_err());
        assert!(ControlRecordType::parse_key(&[0xff, 0xff, 0, 1]).is_err());
        assert_eq!(
            ControlRecordType::parse_key(&[0, 1, 0, 2, 9]).unwrap(),
            ControlRecordType::LeaderChange
        );
        assert_eq!(
            ControlRecordType::parse_key(&[0, 0, 0, 42]).unwrap(),
            ControlRecordType::Unknown(42)
        );
    }

    #[test]
    fn marker_needs_a_marker_type_and_a_whole_value() {
        assert!(EndTransactionMarker::parse(&[0, 0, 0, 2], Some(&[0, 0, 0, 0, 0, 0])).is_err());
        assert!(EndTransactionMarker::parse(&[0, 0, 0, 1], Some(&[0, 0, 0, 0, 0])).is_err());
        assert!(EndTransactionMarker::parse(&[0, 0, 0, 1], None).is_err());
    }
}
