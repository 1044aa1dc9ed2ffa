"""Properties of the authorizer's matching (authorizer.py), over generated ACL sets: StandardAuthorizer's rules
hold for any bindings, principals, hosts, operations and resource names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkamock.broker import authorizer
from kafkamock.broker.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)

PRINCIPALS = ["User:alice", "User:bob", "User:*"]
HOSTS = ["*", "10.0.0.1", "10.0.0.2"]
OPERATIONS = [op for op in AclOperation if op not in (AclOperation.UNKNOWN, AclOperation.ANY)]
CONCRETE = [op for op in OPERATIONS if op != AclOperation.ALL]
TYPES = [ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID]
names = st.text(alphabet="ab*-", min_size=1, max_size=4)

bindings = st.builds(
    AclBinding, st.sampled_from(TYPES), names, st.sampled_from([PatternType.LITERAL, PatternType.PREFIXED]),
    st.sampled_from(PRINCIPALS), st.sampled_from(HOSTS), st.sampled_from(OPERATIONS),
    st.sampled_from([AclPermissionType.ALLOW, AclPermissionType.DENY]))
acl_sets = st.lists(bindings, max_size=12)
principals = st.sampled_from(["User:alice", "User:bob"])
hosts = st.sampled_from(["10.0.0.1", "10.0.0.2"])
operations = st.sampled_from(CONCRETE)
resource_types = st.sampled_from(TYPES)
settings_ = st.builds(authorizer.Settings, st.just(frozenset()), st.booleans())


def allowed(acls, s, principal, host, op, rtype, name) -> bool:
    return authorizer.authorize(acls, s, principal, host, op, rtype, name)


@given(acl_sets, settings_, principals, hosts, operations, resource_types, names)
def test_super_users_are_always_allowed(acls, s, principal, host, op, rtype, name):
    s = authorizer.Settings(frozenset({principal}), s.allow_if_no_acl)
    assert allowed(acls + [AclBinding(rtype, name, PatternType.LITERAL, principal, "*", op, AclPermissionType.DENY)],
                   s, principal, host, op, rtype, name)


@given(acl_sets, settings_, principals, hosts, operations, resource_types, names,
       st.sampled_from(["*", "literal", "prefix"]), st.sampled_from(["me", "User:*"]), st.booleans())
def test_a_matching_deny_wins_over_any_allow(acls, s, principal, host, op, rtype, name, how, who, any_host):
    pattern = {"*": ("*", PatternType.LITERAL), "literal": (name, PatternType.LITERAL),
               "prefix": (name[:1], PatternType.PREFIXED)}[how]
    deny = AclBinding(rtype, pattern[0], pattern[1], principal if who == "me" else who, "*" if any_host else host,
                      op, AclPermissionType.DENY)
    everything = AclBinding(rtype, "*", PatternType.LITERAL, "User:*", "*", AclOperation.ALL,
                            AclPermissionType.ALLOW)
    assert not allowed(acls + [everything, deny], s, principal, host, op, rtype, name)


@given(acl_sets, settings_, principals, hosts, operations, resource_types, names)
def test_with_no_binding_for_the_resource_the_default_decides(acls, s, principal, host, op, rtype, name):
    unrelated = [a for a in acls if a.resource_type != rtype or not authorizer.applies(a, name)]
    assert allowed(unrelated, s, principal, host, op, rtype, name) is s.allow_if_no_acl


@given(acl_sets, settings_, principals, hosts, operations, resource_types, names)
def test_bindings_of_other_resource_types_do_not_count(acls, s, principal, host, op, rtype, name):
    same = [a for a in acls if a.resource_type == rtype]
    assert allowed(acls, s, principal, host, op, rtype, name) == allowed(same, s, principal, host, op, rtype, name)


@given(acl_sets, settings_, principals, hosts, operations, resource_types, names, bindings)
def test_adding_an_allow_never_denies(acls, s, principal, host, op, rtype, name, extra):
    extra = AclBinding(*[getattr(extra, f) for f in ("resource_type", "name", "pattern_type", "principal", "host",
                                                     "operation")], AclPermissionType.ALLOW)
    before = allowed(acls, s, principal, host, op, rtype, name)
    after = allowed(acls + [extra], s, principal, host, op, rtype, name)
    # An ALLOW that applies to the resource without matching the request can only take away the no-ACL default.
    lost_default = (s.allow_if_no_acl and extra.resource_type == rtype and authorizer.applies(extra, name)
                    and not _any_applies(acls, rtype, name))
    assert after or not before or lost_default


def _any_applies(acls, rtype, name) -> bool:
    return any(a.resource_type == rtype and authorizer.applies(a, name) for a in acls)


@given(acl_sets, principals, hosts, resource_types, names,
       st.sampled_from([AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]))
def test_read_write_delete_alter_imply_describe(acls, principal, host, rtype, name, op):
    s = authorizer.Settings()
    if allowed(acls, s, principal, host, op, rtype, name) and not any(
            a.permission == AclPermissionType.DENY and a.operation == AclOperation.DESCRIBE for a in acls):
        assert allowed(acls, s, principal, host, AclOperation.DESCRIBE, rtype, name)


@given(acl_sets, principals, hosts, resource_types, names)
def test_alter_configs_implies_describe_configs(acls, principal, host, rtype, name):
    s = authorizer.Settings()
    if allowed(acls, s, principal, host, AclOperation.ALTER_CONFIGS, rtype, name) and not any(
            a.permission == AclPermissionType.DENY and a.operation == AclOperation.DESCRIBE_CONFIGS for a in acls):
        assert allowed(acls, s, principal, host, AclOperation.DESCRIBE_CONFIGS, rtype, name)


@given(acl_sets, principals, hosts, operations, resource_types, names)
def test_a_deny_of_one_operation_denies_no_other(acls, principal, host, op, rtype, name):
    s = authorizer.Settings()
    others = [o for o in CONCRETE if o != op]
    deny = AclBinding(rtype, name, PatternType.LITERAL, principal, "*", op, AclPermissionType.DENY)
    for other in others:
        assert allowed(acls + [deny], s, principal, host, other, rtype, name) == \
            allowed(acls + [AclBinding(rtype, name, PatternType.LITERAL, "User:nobody", "*", op,
                                       AclPermissionType.DENY)], s, principal, host, other, rtype, name)


@given(acl_sets, resource_types, names)
def test_a_match_filter_selects_exactly_the_bindings_that_apply(acls, rtype, name):
    flt = AclBindingFilter(rtype, name, PatternType.MATCH, None, None, AclOperation.ANY, AclPermissionType.ANY)
    assert [a for a in acls if flt.matches(a)] == [a for a in acls if a.resource_type == rtype
                                                   and authorizer.applies(a, name)]


@given(acl_sets)
def test_the_any_filter_selects_everything(acls):
    flt = AclBindingFilter(ResourceType.ANY, None, PatternType.ANY, None, None, AclOperation.ANY,
                           AclPermissionType.ANY)
    assert all(flt.matches(a) for a in acls)


@settings(max_examples=200)
@given(acl_sets, principals, hosts, operations, resource_types, names)
def test_an_allowed_resource_means_allowed_by_resource_type(acls, principal, host, op, rtype, name):
    """authorizeByResourceType: if the principal may do ``op`` on a resource whose own literal or prefixed ALLOW
    grants it, it may do ``op`` on some resource of the type."""
    s = authorizer.Settings()
    grants = [a for a in acls if a.resource_type == rtype and a.permission == AclPermissionType.ALLOW
              and a.operation in (op, AclOperation.ALL) and a.principal in (principal, "User:*")
              and a.host in (host, "*") and a.name == name]
    if grants and allowed(acls, s, principal, host, op, rtype, name):
        assert authorizer.authorize_by_resource_type(acls, s, principal, host, op, rtype)
