/* The tensor setters and op-builder calls the other graph tests do not reach: strides and data
 * type of a tensor (read back through dnnp_graph_tensor_get), a caller-declared output
 * (dnnp_op_builder_set_output), the node's compute data type, integer-list attributes (conv
 * padding/stride/dilation, read back through the attributes JSON) and the float-list setter's
 * contract (no op of the tables takes a float list, so it must refuse every attribute with the
 * attribute's name in the message). */
#include <stdlib.h>
#include <string.h>

#include "common.h"

int main(void) {
    const int64_t xd[4] = {2, 8, 16, 16}, wd[4] = {4, 8, 3, 3}, yd[4] = {2, 4, 16, 16};
    /* NHWC storage of an NCHW-ordered tensor. */
    const int64_t nhwc[4] = {8 * 16 * 16, 1, 16 * 8, 8};
    const int64_t pad[2] = {1, 1}, one[2] = {1, 1};
    const double scales[2] = {0.5, 2.0};
    dnnp_graph_t *g = NULL;
    dnnp_op_builder_t *b = NULL;
    int64_t x, w, y, got = -1;
    int64_t dims[8], strides[8], ragged = 0;
    size_t rank = 0, node = 99;
    dnnp_data_type_t dt = 0;
    bool is_virtual = true, by_value = true;
    char attrs[2048];

    CHECK_OK(dnnp_graph_create(DNNP_DATA_TYPE_HALF, DNNP_DATA_TYPE_FLOAT, DNNP_DATA_TYPE_FLOAT, &g));
    CHECK_OK(dnnp_graph_tensor_create(g, "x", DNNP_DATA_TYPE_HALF, 4, xd, NULL, -1, &x));
    CHECK_OK(dnnp_graph_tensor_create(g, "w", DNNP_DATA_TYPE_HALF, 4, wd, NULL, -1, &w));
    CHECK_OK(dnnp_graph_tensor_create(g, "y", DNNP_DATA_TYPE_HALF, 4, yd, NULL, -1, &y));

    /* Strides and data type setters, read back. */
    CHECK_OK(dnnp_graph_tensor_set_strides(g, x, 4, nhwc));
    CHECK_OK(dnnp_graph_tensor_set_data_type(g, y, DNNP_DATA_TYPE_BFLOAT16));
    CHECK_OK(dnnp_graph_tensor_get(g, x, &dt, &rank, dims, strides, 8, &is_virtual, &by_value, &ragged));
    CHECK_EQ_SIZE(rank, 4);
    for (size_t i = 0; i < 4; ++i) {
        CHECK_EQ_INT(strides[i], nhwc[i]);
        CHECK_EQ_INT(dims[i], xd[i]);
    }
    CHECK_EQ_INT(dt, DNNP_DATA_TYPE_HALF);
    CHECK_OK(dnnp_graph_tensor_get(g, y, &dt, &rank, dims, strides, 8, &is_virtual, &by_value, &ragged));
    CHECK_EQ_INT(dt, DNNP_DATA_TYPE_BFLOAT16);
    CHECK(!is_virtual);
    /* Setter refusals: unknown data type, unknown uid, NULL strides. Strides of another rank
     * are accepted while the graph is mutable (dims may follow) and refused by validation. */
    CHECK_STATUS(dnnp_graph_tensor_set_strides(g, x, 4, NULL), DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_graph_tensor_set_data_type(g, y, 999), DNNP_STATUS_BAD_PARAM);
    CHECK_STATUS(dnnp_graph_tensor_set_data_type(g, 424242, DNNP_DATA_TYPE_HALF), DNNP_STATUS_NOT_FOUND);
    CHECK_LAST_ERROR_CONTAINS("424242");

    /* A conv with integer-list attributes, a compute type and a caller-declared output. */
    CHECK_OK(dnnp_op_builder_begin("conv_fprop", &b));
    CHECK_OK(dnnp_op_builder_set_input(b, "image", x));
    CHECK_OK(dnnp_op_builder_set_input(b, "weight", w));
    CHECK_OK(dnnp_op_builder_set_attr_ints(b, "padding", pad, 2));
    CHECK_OK(dnnp_op_builder_set_attr_ints(b, "stride", one, 2));
    CHECK_OK(dnnp_op_builder_set_attr_ints(b, "dilation", one, 2));
    CHECK_STATUS(dnnp_op_builder_set_attr_ints(b, "padding", NULL, 2), DNNP_STATUS_NULL_PARAMETER);
    CHECK_STATUS(dnnp_op_builder_set_attr_ints(b, "paddings", pad, 2), DNNP_STATUS_NOT_FOUND);
    CHECK_LAST_ERROR_CONTAINS("paddings");
    CHECK_STATUS(dnnp_op_builder_set_attr_floats(b, "padding", scales, 2), DNNP_STATUS_BAD_PARAM);
    CHECK_LAST_ERROR_CONTAINS("padding");
    CHECK_STATUS(dnnp_op_builder_set_attr_floats(b, "padding", NULL, 2), DNNP_STATUS_NULL_PARAMETER);
    CHECK_OK(dnnp_op_builder_set_compute_data_type(b, DNNP_DATA_TYPE_FLOAT));
    CHECK_STATUS(dnnp_op_builder_set_compute_data_type(b, 999), DNNP_STATUS_BAD_PARAM);
    CHECK_OK(dnnp_op_builder_set_output(b, "Y", y));
    CHECK_STATUS(dnnp_op_builder_set_output(b, "Z", y), DNNP_STATUS_NOT_FOUND);
    CHECK_OK(dnnp_op_builder_finish(b, g, &node));
    CHECK_EQ_SIZE(node, 0);
    CHECK_OK(dnnp_op_builder_output_uid(b, "Y", &got));
    CHECK_EQ_INT(got, y);
    dnnp_op_builder_destroy(b);

    CHECK_OK(dnnp_graph_node_attributes_json(g, 0, attrs, sizeof attrs, NULL));
    CHECK(strstr(attrs, "\"padding\"") != NULL);
    CHECK(strstr(attrs, "\"stride\"") != NULL);
    CHECK_OK(dnnp_graph_validate(g));
    CHECK_OK(dnnp_graph_tensor_set_strides(g, x, 3, nhwc));
    CHECK_STATUS(dnnp_graph_validate(g), DNNP_STATUS_INVALID_GRAPH);
    CHECK_LAST_ERROR_CONTAINS("strides (rank 3) must have the rank of dims (rank 4)");
    CHECK_OK(dnnp_graph_tensor_set_strides(g, x, 4, nhwc));
    CHECK_OK(dnnp_graph_validate(g));

    dnnp_graph_destroy(g);
    return 0;
}
