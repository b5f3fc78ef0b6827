//! How segdist's plan nodes and functions cross the wire to a Ballista
//! scheduler and its executors.
//!
//! Both codecs wrap Ballista's own: a buffer that starts with [`MAGIC`] is
//! segdist's join (a [`Spec`], 17 bytes; the inputs travel as ordinary
//! plans), one that starts with [`PARTS_MAGIC`] its per-partition writer
//! (the folder's name), anything else is handed to Ballista's codec.
//! segdist's scalar functions are found by name.

use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};

use crate::exec::SnapExec;
use crate::parts::{WritePartsExec, WritePartsNode};
use crate::snap::{SnapNode, Spec};

/// The first bytes of every node segdist encodes (a byte no protobuf
/// message of Ballista's starts with, then a name and a version).
pub const MAGIC: &[u8] = b"\xffsegdist-snap-1\0";

/// The first bytes of a [`WritePartsNode`] or [`WritePartsExec`]; the
/// folder's name (UTF-8) follows.
pub const PARTS_MAGIC: &[u8] = b"\xffsegdist-parts-1\0";

fn parts_dir(buf: &[u8]) -> Option<String> {
    buf.strip_prefix(PARTS_MAGIC).and_then(|d| String::from_utf8(d.to_vec()).ok())
}

fn encode_parts(dir: &str, buf: &mut Vec<u8>) {
    buf.extend_from_slice(PARTS_MAGIC);
    buf.extend_from_slice(dir.as_bytes());
}

fn ours(buf: &[u8]) -> Option<Spec> {
    buf.strip_prefix(MAGIC).and_then(Spec::decode)
}

fn encode(spec: Spec, buf: &mut Vec<u8>) {
    buf.extend_from_slice(MAGIC);
    buf.extend(spec.encode());
}

fn udf(name: &str) -> Option<Arc<ScalarUDF>> {
    crate::functions::all().into_iter().find(|f| f.name() == name)
}

/// Ballista's logical codec and segdist's [`SnapNode`].
///
/// ```
/// use datafusion_proto::logical_plan::LogicalExtensionCodec;
///
/// let codec = segdist_sql::codec::LogicalCodec::default();
/// assert_eq!(codec.try_decode_udf("segdist_distance", &[])?.name(), "segdist_distance");
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
#[derive(Debug, Default)]
pub struct LogicalCodec {
    inner: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for LogicalCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        match ours(buf) {
            Some(spec) if inputs.len() == 2 => {
                let node = SnapNode::try_new(spec, inputs[0].clone(), inputs[1].clone())?;
                Ok(Extension { node: Arc::new(node) })
            }
            _ => match parts_dir(buf) {
                Some(dir) if inputs.len() == 1 => {
                    Ok(Extension { node: Arc::new(WritePartsNode::new(inputs[0].clone(), dir)) })
                }
                _ => self.inner.try_decode(buf, inputs, ctx),
            },
        }
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        if let Some(n) = node.node.as_any().downcast_ref::<SnapNode>() {
            encode(n.spec(), buf);
            return Ok(());
        }
        if let Some(n) = node.node.as_any().downcast_ref::<WritePartsNode>() {
            encode_parts(n.dir(), buf);
            return Ok(());
        }
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        self.inner.try_decode_table_provider(buf, table_ref, schema, ctx)
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match udf(name) {
            Some(f) => Ok(f),
            None => self.inner.try_decode_udf(name, buf),
        }
    }
}

/// Ballista's physical codec and segdist's [`SnapExec`].
///
/// ```
/// use datafusion_proto::physical_plan::PhysicalExtensionCodec;
///
/// let codec = segdist_sql::codec::PhysicalCodec::default();
/// assert!(codec.try_decode_udf("segdist_closest_point", &[]).is_ok());
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
#[derive(Debug, Default)]
pub struct PhysicalCodec {
    inner: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for PhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match ours(buf) {
            Some(spec) if inputs.len() == 2 => {
                Ok(Arc::new(SnapExec::try_new(spec, Arc::clone(&inputs[0]), Arc::clone(&inputs[1]))?))
            }
            _ => match parts_dir(buf) {
                Some(dir) if inputs.len() == 1 => Ok(Arc::new(WritePartsExec::new(Arc::clone(&inputs[0]), dir))),
                _ => self.inner.try_decode(buf, inputs, ctx, proto_converter),
            },
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        if let Some(n) = node.downcast_ref::<SnapExec>() {
            encode(n.spec(), buf);
            return Ok(());
        }
        if let Some(n) = node.downcast_ref::<WritePartsExec>() {
            encode_parts(n.dir(), buf);
            return Ok(());
        }
        self.inner.try_encode(node, buf, proto_converter)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match udf(name) {
            Some(f) => Ok(f),
            None => self.inner.try_decode_udf(name, buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_round_trips_and_foreign_bytes_are_not_ours() {
        let spec = Spec { k: 3, max_distance: 2.5, geographic: true, three_d: false };
        let mut buf = Vec::new();
        encode(spec, &mut buf);
        assert_eq!(ours(&buf), Some(spec));
        assert_eq!(ours(&buf[1..]), None);
        assert_eq!(ours(b"\x0a\x02hi"), None);
        let mut buf = Vec::new();
        encode_parts("/data/out dir", &mut buf);
        assert_eq!(parts_dir(&buf).as_deref(), Some("/data/out dir"));
        assert_eq!(ours(&buf), None);
        assert_eq!(parts_dir(b"\xffsegdist-snap-1\0"), None);
        assert!(udf("segdist_distance").is_some() && udf("abs").is_none());
    }
}
