/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "parse/fsfacts.h"

static void test_network_units(void **state)
{
	(void)state;
	assert_true(fsfacts_unit_is_network("iscsi.service"));
	assert_true(fsfacts_unit_is_network("network-online.target"));
	assert_true(fsfacts_unit_is_network("wg-quick@wg0.service"));
	assert_true(fsfacts_unit_is_network("openvpn-client@office.service"));
	assert_true(fsfacts_unit_is_network("tailscaled.service"));
	assert_false(fsfacts_unit_is_network("wg-quick.service"));
	assert_false(fsfacts_unit_is_network("systemd-cryptsetup@data.service"));
	assert_false(fsfacts_unit_is_network("local-fs.target"));
	assert_false(fsfacts_unit_is_network(NULL));
}

static void test_tags(void **state)
{
	const char *v = NULL;

	assert_int_equal(fsfacts_tag_parse("UUID=5e81", &v), FSFACTS_TAG_UUID);
	assert_string_equal(v, "5e81");
	assert_int_equal(fsfacts_tag_parse("LABEL=data", &v), FSFACTS_TAG_LABEL);
	assert_int_equal(fsfacts_tag_parse("PARTUUID=1-2", &v), FSFACTS_TAG_PARTUUID);
	assert_int_equal(fsfacts_tag_parse("PARTLABEL=p", &v), FSFACTS_TAG_PARTLABEL);
	assert_int_equal(fsfacts_tag_parse("ID=wwn-0x5000c500a1b2c3d4", &v), FSFACTS_TAG_ID);
	assert_string_equal(v, "wwn-0x5000c500a1b2c3d4");
	assert_int_equal(fsfacts_tag_parse("UUID=", &v), FSFACTS_TAG_UUID);
	assert_string_equal(v, "");
	assert_int_equal(fsfacts_tag_parse("uuid=x", NULL), FSFACTS_TAG_NONE);
	assert_int_equal(fsfacts_tag_parse("/dev/sda1", NULL), FSFACTS_TAG_NONE);
	assert_int_equal(fsfacts_tag_parse("XID=x", NULL), FSFACTS_TAG_NONE);
	assert_int_equal(fsfacts_tag_parse(NULL, NULL), FSFACTS_TAG_NONE);

	assert_true(fsfacts_spec_is_tag("ID=ata-DISK_1"));
	assert_true(fsfacts_spec_is_tag("PARTLABEL=x"));
	assert_false(fsfacts_spec_is_tag("LABEL="));
	assert_false(fsfacts_spec_is_tag("/srv"));
	(void)state;
}

/* The tag a spec was meant to be, whatever its case; ASCII only. */
static void test_tag_any_case(void **state)
{
	const char *dir = NULL;

	assert_string_equal(fsfacts_tag_name_any_case("uuid=x", &dir), "UUID=");
	assert_string_equal(dir, "/dev/disk/by-uuid/");
	assert_string_equal(fsfacts_tag_name_any_case("UUID=", NULL), "UUID=");
	assert_string_equal(fsfacts_tag_name_any_case("PartLabel=p", &dir), "PARTLABEL=");
	assert_string_equal(dir, "/dev/disk/by-partlabel/");
	assert_string_equal(fsfacts_tag_name_any_case("partuuid=1", NULL), "PARTUUID=");
	assert_string_equal(fsfacts_tag_name_any_case("Id=wwn", NULL), "ID=");
	assert_string_equal(fsfacts_tag_name_any_case("label=", NULL), "LABEL=");
	assert_null(fsfacts_tag_name_any_case("uuid", NULL));
	assert_null(fsfacts_tag_name_any_case("identity=x", NULL));
	assert_null(fsfacts_tag_name_any_case("/dev/disk/by-uuid/x", NULL));
	/* a dotless i, U+0131, where a Turkish locale would lower 'I' */
	assert_null(fsfacts_tag_name_any_case("\304\261d=x", NULL));
	assert_null(fsfacts_tag_name_any_case("", NULL));
	assert_null(fsfacts_tag_name_any_case(NULL, NULL));
	(void)state;
}

static void test_tag_paths(void **state)
{
	const char *v = NULL;

	assert_int_equal(fsfacts_tag_from_path("/dev/disk/by-id/ata-X_1", &v), FSFACTS_TAG_ID);
	assert_string_equal(v, "ata-X_1");
	assert_int_equal(fsfacts_tag_from_path("/dev/disk/by-uuid/5e", &v), FSFACTS_TAG_UUID);
	assert_int_equal(fsfacts_tag_from_path("/dev/disk/by-label/a", &v), FSFACTS_TAG_LABEL);
	assert_int_equal(fsfacts_tag_from_path("/dev/disk/by-partuuid/a", &v), FSFACTS_TAG_PARTUUID);
	assert_int_equal(fsfacts_tag_from_path("/dev/disk/by-partlabel/a", &v), FSFACTS_TAG_PARTLABEL);
	assert_int_equal(fsfacts_tag_from_path("/dev/disk/by-path/pci-0", NULL), FSFACTS_TAG_NONE);
	assert_int_equal(fsfacts_tag_from_path("/dev/sda", NULL), FSFACTS_TAG_NONE);
	(void)state;
}

static void test_spec_kinds(void **state)
{
	assert_true(fsfacts_spec_is_device("/dev/sda1"));
	assert_true(fsfacts_spec_is_device("ID=nvme-eui.0025"));
	assert_true(fsfacts_spec_is_device("UUID="));
	assert_false(fsfacts_spec_is_device("tmpfs"));
	assert_false(fsfacts_spec_is_device("/srv/img"));
	assert_false(fsfacts_spec_is_device(NULL));

	assert_true(fs_spec_is_name("tmpfs"));
	assert_true(fs_spec_is_name("server:/export"));
	assert_false(fs_spec_is_name("/dev/sda"));
	assert_false(fs_spec_is_name("ID=x"));
	assert_false(fs_spec_is_name(NULL));
	(void)state;
}

static void test_types(void **state)
{
	assert_true(fsfacts_is_nodev("tmpfs"));
	assert_true(fsfacts_is_nodev("nfs4"));
	assert_true(fsfacts_is_nodev("fuse.sshfs"));
	assert_true(fsfacts_is_nodev("fuseblk")); /* as before: every fuse* */
	assert_false(fsfacts_is_nodev("btrfs"));
	assert_false(fsfacts_is_nodev("auto"));
	assert_false(fsfacts_is_nodev(NULL));

	assert_true(fsfacts_is_network("nfs", "srv:/x"));
	assert_true(fsfacts_is_network("cifs", "//srv/x"));
	assert_true(fsfacts_is_network("fuse.sshfs", "u@h:/"));
	assert_true(fsfacts_is_network("fuse", "sshfs#u@h:/"));
	assert_true(fsfacts_is_network("glusterfs", "h:/v"));
	assert_false(fsfacts_is_network("fuse", "/dev/x"));
	assert_false(fsfacts_is_network("ext4", "/dev/sda1"));
	assert_false(fsfacts_is_network(NULL, NULL));

	assert_true(fsfacts_is_local("ext4"));
	assert_true(fsfacts_is_local("tmpfs"));
	assert_true(fsfacts_is_local("rootfs"));
	assert_false(fsfacts_is_local("nfs"));
	assert_false(fsfacts_is_local("fuse.sshfs"));
	assert_false(fsfacts_is_local("proc"));
	assert_false(fsfacts_is_local(NULL));

	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_network_units), cmocka_unit_test(test_tags),
		cmocka_unit_test(test_tag_any_case),  cmocka_unit_test(test_tag_paths),
		cmocka_unit_test(test_spec_kinds),    cmocka_unit_test(test_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
