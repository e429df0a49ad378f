"""The ``host[:port]`` allow-list reading shared by settings and the tool gateway (SPEC §7.1)."""

import pytest

from project.hostlist import HostRule, parse_host_list


def test_names_addresses_and_ports_are_read_in_one_spelling():
    rules = parse_host_list(["Orders.Internal", "127.0.0.1:9000", "[::1]:8080", " ", "shop.example.com.:443"])
    assert rules == [
        HostRule("orders.internal", None),
        HostRule("127.0.0.1", 9000),
        HostRule("::1", 8080),
        HostRule("shop.example.com", 443),
    ]
    assert [rule.is_address for rule in rules] == [False, True, True, False]
    assert [str(rule) for rule in rules] == ["orders.internal", "127.0.0.1:9000", "[::1]:8080", "shop.example.com:443"]


@pytest.mark.parametrize("entry", ["https://shop/x", "shop:99999", "user@shop", "shop/path", ":80"])
def test_an_entry_that_is_not_host_and_port_is_refused_naming_it(entry):
    with pytest.raises(ValueError) as refused:
        parse_host_list([entry])
    assert repr(entry) in str(refused.value)
