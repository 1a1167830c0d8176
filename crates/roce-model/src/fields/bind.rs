//! How a table entry's value reaches the typed model and `roce diff`: ripgrep's `Flag::update`, one
//! binding per table entry (`Field::bind`). The walker reads every bound key of a section into the section's
//! struct ([`Bind::read`]); `roce diff` shows every bound key from the profile ([`Bind::show`]). A field
//! with a binding therefore needs no line in `walk.rs` or `diff.rs`: its entry says which slot of which
//! section struct holds it (`bind!`) and how its text is read ([`Read`], one method per value kind).
//!
//! Not bound (the walker and the diff keep their code): maps and lists, keys checked against each other
//! (`rails nics`, `ports` and `pod-device`), keys whose slot is not in their section's struct
//! (`node-pool rdma-resource`), and the sections whose shape is an enum (`multus`, `nics`,
//! `nvlink-domain`, `placement`, `nccl-net`).

use std::any::Any;
use std::fmt;

use crate::model::{Fabric, Image, Inspector, Job, Nccl, NcclList, NcclRelease, NodePool, Profile};
use crate::model::{Rails, Ucx};
use crate::names::K8sName;
use crate::source::{Origin, Spanned};
use crate::ucx_list::{UcxNetDevices, UcxTls};

/// A binding: reads its key into its section's struct, shows its value from a profile.
pub(crate) trait Bind: fmt::Debug {
    /// Reads the key's value (through `r`, which reports what is wrong with it) into `section`, the struct
    /// of the entry's section.
    fn read(&self, r: &mut dyn Read, section: &mut dyn Any);
    /// Its value in `p` as `roce diff` shows it, or `None` where `p` does not set it; `choices` are the
    /// entry's, where it is a choice.
    fn show(&self, choices: &[&str], p: &Profile) -> Option<Spanned<String>>;
}

/// The value kinds a key is read as, each with the walker's checks and messages. The reader is bound to one
/// key: it reports the key missing where the table requires it, and takes ranges, choices and the variable
/// from its entry.
pub(crate) trait Read {
    /// Any string.
    fn string(&mut self) -> Option<Spanned<String>>;
    /// A string that is not empty.
    fn nonempty(&mut self) -> Option<Spanned<String>>;
    /// An absolute path.
    fn abs_path(&mut self) -> Option<Spanned<String>>;
    /// A CIDR range (`fd02::/16`).
    fn cidr(&mut self) -> Option<Spanned<String>>;
    /// A name pattern (`ibp{nic}p{port}`).
    fn pattern(&mut self) -> Option<Spanned<String>>;
    /// A Kubernetes object name (a DNS-1123 subdomain: a RuntimeClass).
    fn k8s_name(&mut self) -> Option<Spanned<K8sName>>;
    /// A whole number in the entry's range.
    fn int(&mut self) -> Option<Spanned<u32>>;
    /// A boolean.
    fn boolean(&mut self) -> Option<Spanned<bool>>;
    /// One of the entry's choices: its index.
    fn choice(&mut self) -> Option<Spanned<usize>>;
    /// An NCCL release, quoted.
    fn nccl_release(&mut self) -> Option<Spanned<NcclRelease>>;
    /// An NCCL list for the entry's variable; `by_release`: a release is named, so fields after the port
    /// are the version rules' to judge.
    fn nccl_list(&mut self, by_release: bool) -> Option<NcclList>;
    /// A `UCX_TLS` list.
    fn ucx_tls(&mut self) -> Option<UcxTls>;
    /// A `UCX_NET_DEVICES` list.
    fn ucx_net_devices(&mut self) -> Option<UcxNetDevices>;
    /// Where the section is: a default's place.
    fn origin(&self) -> Origin;
}

/// A section's struct, as found in a profile.
pub(crate) trait Part: Any {
    /// The section in `p`, or `None` where `p` has none (no `inspector`).
    fn of(p: &Profile) -> Option<&Self>;
}

macro_rules! parts {
    ($($ty:ty => |$p:ident| $of:expr;)*) => {$(
        impl Part for $ty {
            fn of($p: &Profile) -> Option<&Self> {
                $of
            }
        }
    )*};
}

parts! {
    Profile => |p| Some(p);
    Fabric => |p| Some(&p.fabric);
    NodePool => |p| Some(&p.node_pool);
    Rails => |p| Some(&p.rails);
    Nccl => |p| Some(&p.nccl);
    Inspector => |p| p.nccl.inspector.as_ref().map(|i| &i.value);
    Ucx => |p| Some(&p.ucx);
    Image => |p| Some(&p.image);
    Job => |p| Some(&p.job);
}

/// A value as `roce diff` shows it.
pub(crate) trait Shown {
    /// Its text, at its origin.
    fn shown(&self) -> Spanned<String>;
}

impl<T: fmt::Display> Shown for Spanned<T> {
    fn shown(&self) -> Spanned<String> {
        Spanned::new(self.value.to_string(), self.origin)
    }
}

macro_rules! shown_as_text {
    ($($ty:ty),*) => {$(
        impl Shown for $ty {
            fn shown(&self) -> Spanned<String> {
                self.text().clone()
            }
        }
    )*};
}

shown_as_text!(NcclList, UcxTls, UcxNetDevices);

/// What a slot holds: an optional value (`Option<T>`), or one the section always has (`Spanned<T>`: a
/// required key, or one with a default), which a value read replaces.
pub(crate) trait Holds {
    /// The value read.
    type Item;
    /// Puts the value read (none: the key is missing or wrong, and the walker has said so).
    fn put(&mut self, v: Option<Self::Item>);
    /// The value, if any.
    fn held(&self) -> Option<&Self::Item>;
}

impl<T> Holds for Option<T> {
    type Item = T;
    fn put(&mut self, v: Option<T>) {
        *self = v;
    }
    fn held(&self) -> Option<&T> {
        self.as_ref()
    }
}

impl<T> Holds for Spanned<T> {
    type Item = Spanned<T>;
    fn put(&mut self, v: Option<Spanned<T>>) {
        if let Some(v) = v {
            *self = v;
        }
    }
    fn held(&self) -> Option<&Spanned<T>> {
        Some(self)
    }
}

/// A slot `H` of section `S`, read by `read`.
pub(crate) struct Slot<S, H: Holds> {
    pub get: fn(&S) -> &H,
    pub get_mut: fn(&mut S) -> &mut H,
    /// Reads the value; the section as read so far is there for keys that depend on an earlier one.
    pub read: fn(&mut dyn Read, &S) -> Option<H::Item>,
}

impl<S, H: Holds> fmt::Debug for Slot<S, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Slot<{}>", std::any::type_name::<S>())
    }
}

/// The struct a slot's reader fills: the walker passes each section's own.
fn section_of<S: Any>(section: &mut dyn Any) -> &mut S {
    section.downcast_mut::<S>().unwrap_or_else(|| {
        panic!(
            "fields::table binds a key of {} in another section",
            std::any::type_name::<S>()
        )
    })
}

impl<S: Part, H: Holds> Bind for Slot<S, H>
where
    H::Item: Shown,
{
    fn read(&self, r: &mut dyn Read, section: &mut dyn Any) {
        let s = section_of::<S>(section);
        let value = (self.read)(r, s);
        (self.get_mut)(s).put(value);
    }

    fn show(&self, _: &[&str], p: &Profile) -> Option<Spanned<String>> {
        (self.get)(S::of(p)?).held().map(Shown::shown)
    }
}

/// A choice of section `S` held in `H` (`Option<Spanned<T>>` or `Spanned<T>`): `values[i]` is the table's
/// `i`th choice, and `roce diff` shows a value by the first choice that gives it (`AF_INET6` as `ipv6`).
pub(crate) struct Choice<S, T: 'static, H> {
    pub get: fn(&S) -> &H,
    pub get_mut: fn(&mut S) -> &mut H,
    pub values: &'static [T],
}

impl<S, T, H> fmt::Debug for Choice<S, T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Choice<{}>", std::any::type_name::<T>())
    }
}

impl<S: Part, T: Copy + PartialEq + 'static, H: Holds<Item = Spanned<T>>> Bind for Choice<S, T, H> {
    fn read(&self, r: &mut dyn Read, section: &mut dyn Any) {
        let value = r.choice().map(|i| i.map(|i| self.values[i]));
        (self.get_mut)(section_of::<S>(section)).put(value);
    }

    fn show(&self, choices: &[&str], p: &Profile) -> Option<Spanned<String>> {
        let v = (self.get)(S::of(p)?).held()?;
        let i = self.values.iter().position(|x| *x == v.value)?;
        Some(Spanned::new(choices[i].to_string(), v.origin))
    }
}

/// A table entry's binding: `bind!(Section.slot, reader)`, the reader a [`Read`] method (`nonempty`) or a
/// closure of the reader and the section read so far; `bind!(Section.slot, reader, or VALUE)`, a key the
/// section has in any case, `VALUE` at the section's place where the key is missing;
/// `bind!(Section.slot, choice Type [Variant, …])`, one variant per choice of the entry. `Section` is the
/// model's struct for the entry's section.
macro_rules! bind {
    ($section:ident . $slot:ident, choice $ty:ident [$($v:ident),* $(,)?]) => {
        Some(&crate::fields::bind::Choice::<crate::model::$section, crate::model::$ty, _> {
            get: |s| &s.$slot,
            get_mut: |s| &mut s.$slot,
            values: &[$(crate::model::$ty::$v),*],
        })
    };
    ($section:ident . $slot:ident, $read:ident, or $default:expr) => {
        bind!($section.$slot, |r, _| {
            let default = crate::source::Spanned::new($default, r.origin());
            Some(r.$read().unwrap_or(default))
        })
    };
    ($section:ident . $slot:ident, $read:ident) => {
        bind!($section.$slot, |r, _| r.$read())
    };
    ($section:ident . $slot:ident, $read:expr) => {
        Some(&crate::fields::bind::Slot::<crate::model::$section, _> {
            get: |s| &s.$slot,
            get_mut: |s| &mut s.$slot,
            read: $read,
        })
    };
}
